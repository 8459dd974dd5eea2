import { type CanActivate, type ExecutionContext, Inject, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { FastifyReply } from 'fastify';
import { ApiError } from '../../api-error.js';
import type { ExternalRequest } from '../external-api.guard.js';
import { RateLimitConfig } from './rate-limit.config.js';
import { RateLimitCounters } from './rate-limit-counters.js';
import { RateLimitPolicies } from './rate-limit-policies.js';
import { rateLimitHeaders } from './rate-limit-policy.js';

/** Metadata key of @RateLimited: the endpoint name a route is counted under. */
export const RATE_LIMITED = 'runline:rate-limited';

/** The spec's message (errors table, 429). */
export const RATE_LIMIT_EXCEEDED = 'Rate limit exceeded';

/**
 * Counts the request against its token's limit for the endpoint, once the external pipeline
 * knows the token, and sets the X-RateLimit headers on whatever the route answers. Over the
 * limit: 429 with Retry-After, before the body is validated or anything is sent to run.
 */
@Injectable()
export class RateLimitGuard implements CanActivate {
  private readonly enabled: boolean;

  constructor(
    private readonly reflector: Reflector,
    private readonly policies: RateLimitPolicies,
    private readonly counters: RateLimitCounters,
    @Inject(RateLimitConfig) config: RateLimitConfig,
  ) {
    this.enabled = config.RATE_LIMITS === 'on';
  }

  async canActivate(context: ExecutionContext): Promise<boolean> {
    if (!this.enabled) return true;
    const endpoint = this.reflector.get<string>(RATE_LIMITED, context.getHandler());
    const request = context.switchToHttp().getRequest<ExternalRequest>();
    const caller = request.caller;
    if (!caller) throw new Error(`rate-limited route ${endpoint} has no caller: @RateLimited must be written above @ExternalRoute`);
    // Both usually answer from memory; awaiting only what is a promise keeps the hot path short.
    const known = this.policies.policy(caller.projectId, caller.checkedAt);
    const policy = known instanceof Promise ? await known : known;
    const counted = this.counters.count({ tokenId: caller.tokenId, endpoint, limit: policy.limit, windowMs: policy.windowMs });
    const tally = counted instanceof Promise ? await counted : counted;
    if (!tally) return true;
    const headers = rateLimitHeaders(policy, tally);
    void context.switchToHttp().getResponse<FastifyReply>().headers(headers);
    if (tally.count > policy.limit) throw new ApiError(429, RATE_LIMIT_EXCEEDED);
    return true;
  }
}
