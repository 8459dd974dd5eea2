import { applyDecorators, type CanActivate, type ExecutionContext, Injectable, SetMetadata, UseGuards } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import type { Caller } from '../access/caller.js';
import { ConsoleAuthGuard, type ConsoleUser } from './console-auth.guard.js';
import { presentedCredential } from './credentials.js';
import { ExternalApiGuard } from './external-api.guard.js';
import { EXTERNAL_ROUTE, type ExternalRouteOptions } from './external-route-options.js';

/** A request to a route both kinds of caller share: exactly one of `user` (console) and `caller` (API token) is set. */
export type TokenOrConsoleRequest = FastifyRequest<{ Params: Record<string, string> }> &
  ({ user: ConsoleUser; caller?: undefined } | { caller: Caller; user?: undefined });

/**
 * The routes a signed-in console user and an API token share (`/external-invocations/{id}`):
 * a console JWT passes the console's checks (ConsoleAuthGuard, which sets `user`), anything
 * else the whole token pipeline (ExternalApiGuard, which sets `caller`), so a malformed or
 * missing token gets the token routes' answers. `credentials.ts` tells the two apart.
 */
@Injectable()
export class TokenOrConsoleGuard implements CanActivate {
  constructor(
    private readonly consoleGuard: ConsoleAuthGuard,
    private readonly tokenGuard: ExternalApiGuard,
  ) {}

  canActivate(context: ExecutionContext): boolean | Promise<boolean> {
    const request = context.switchToHttp().getRequest<FastifyRequest>();
    return presentedCredential(request)?.kind === 'console-jwt' ? this.consoleGuard.canActivate(context) : this.tokenGuard.canActivate(context);
  }
}

/** A route of the external API (token pipeline with `options`) that signed-in console users may call too. */
export const TokenOrConsoleRoute = (options: ExternalRouteOptions) => applyDecorators(SetMetadata(EXTERNAL_ROUTE, options), UseGuards(TokenOrConsoleGuard));
