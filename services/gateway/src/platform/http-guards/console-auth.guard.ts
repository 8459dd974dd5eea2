import { type CanActivate, type ExecutionContext, Inject, Injectable, SetMetadata } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { FastifyRequest } from 'fastify';
import jwt from 'jsonwebtoken';
import { ApiTokenFormat } from '../access/api-token-format.js';
import { GatewayConfig } from '../../config.js';
import { DomainError } from '../errors/domain-error.js';
import { API_ERRORS } from '../errors/error-messages.js';
import { assertJsonObjectBody } from '../http-pipeline/body-parsing.js';
import { presentedCredential } from './credentials.js';

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

const DASHBOARD_ONLY = 'runline:dashboard-only';

/**
 * Marks a console route that sits beside the token routes (`/external-invocations/logs`, …):
 * a real API token presented there is refused with the spec's 403 `Unauthorized` (it "gets
 * no data"), not the 401 of a bad console token.
 */
export const DashboardOnly = () => SetMetadata(DASHBOARD_ONLY, true);

/**
 * Verifies the console JWT (`Authorization: Bearer <jwt>`): HS256 with CONSOLE_JWT_SECRET or
 * RS256 / ES256 with CONSOLE_JWT_PUBLIC_KEY. Missing, invalid and expired tokens get 401.
 */
@Injectable()
export class ConsoleAuthGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    @Inject(GatewayConfig) private readonly config: GatewayConfig,
    @Inject(ApiTokenFormat) private readonly tokenFormat: ApiTokenFormat,
  ) {}

  canActivate(context: ExecutionContext): boolean {
    const request = context.switchToHttp().getRequest<ConsoleRequest>();
    const credential = presentedCredential(request);
    if (!credential) throw new DomainError('unauthenticated', CONSOLE_ERRORS.missing);
    if (credential.kind === 'api-token') {
      const dashboardOnly = this.reflector.get<boolean>(DASHBOARD_ONLY, context.getHandler()) === true;
      if (dashboardOnly && this.tokenFormat.isWellFormed(credential.value)) throw new DomainError('forbidden', API_ERRORS.unauthorized);
      throw new DomainError('unauthenticated', CONSOLE_ERRORS.invalid);
    }
    request.user = this.userOf(credential.value);
    assertJsonObjectBody(request);
    return true;
  }

  /** The signed-in user the JWT names; 401 when it does not verify or names nobody. */
  userOf(token: string): ConsoleUser {
    const claims = this.verify(token);
    if (!claims || typeof claims.sub !== 'string' || claims.sub === '') throw new DomainError('unauthenticated', CONSOLE_ERRORS.invalid);
    const roles = Array.isArray(claims.roles) ? claims.roles : [];
    return { userId: claims.sub, platformAdmin: roles.includes('platform-admin') };
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
