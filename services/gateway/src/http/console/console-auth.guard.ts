import { type CanActivate, type ExecutionContext, Inject, Injectable } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import jwt from 'jsonwebtoken';
import { GatewayConfig } from '../../config.js';
import { DomainError } from '../../errors/domain-error.js';
import { assertJsonObjectBody } from '../body-parsing.js';

/** A signed-in console user, from the JWT's claims. */
export interface ConsoleUser {
  userId: string;
  platformAdmin: boolean;
}

export type ConsoleRequest = FastifyRequest & { user: ConsoleUser };

export const CONSOLE_ERRORS = {
  missing: 'Missing console token',
  invalid: 'Invalid or expired console token',
} as const;

/**
 * Verifies the console JWT (`Authorization: Bearer <jwt>`): HS256 with CONSOLE_JWT_SECRET or
 * RS256 / ES256 with CONSOLE_JWT_PUBLIC_KEY. Missing, invalid and expired tokens get 401.
 */
@Injectable()
export class ConsoleAuthGuard implements CanActivate {
  constructor(@Inject(GatewayConfig) private readonly config: GatewayConfig) {}

  canActivate(context: ExecutionContext): boolean {
    const request = context.switchToHttp().getRequest<ConsoleRequest>();
    const match = /^Bearer\s+(\S+)\s*$/i.exec(request.headers.authorization ?? '');
    if (!match) throw new DomainError('unauthenticated', CONSOLE_ERRORS.missing);
    const claims = this.verify(match[1]!);
    if (!claims || typeof claims.sub !== 'string' || claims.sub === '') throw new DomainError('unauthenticated', CONSOLE_ERRORS.invalid);
    const roles = Array.isArray(claims.roles) ? claims.roles : [];
    request.user = { userId: claims.sub, platformAdmin: roles.includes('platform-admin') };
    assertJsonObjectBody(request);
    return true;
  }

  private verify(token: string): jwt.JwtPayload | undefined {
    const keys: Array<[string, jwt.Algorithm[]]> = [];
    if (this.config.CONSOLE_JWT_SECRET) keys.push([this.config.CONSOLE_JWT_SECRET, ['HS256']]);
    if (this.config.CONSOLE_JWT_PUBLIC_KEY) keys.push([this.config.CONSOLE_JWT_PUBLIC_KEY, ['RS256', 'ES256']]);
    for (const [key, algorithms] of keys) {
      try {
        const claims = jwt.verify(token, key, { algorithms });
        if (typeof claims === 'object') return claims;
      } catch {
        // try the next key; the caller answers 401 if none verifies
      }
    }
    return undefined;
  }
}
