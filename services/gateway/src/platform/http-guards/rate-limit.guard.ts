import { type CanActivate, type ExecutionContext, Inject, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { FastifyReply } from 'fastify';
import { DomainError } from '../errors/domain-error.js';
import { API_ERRORS } from '../errors/error-messages.js';
import { RateLimitConfig } from '../rate-limits/rate-limit.config.js';
import { RateLimitCounters } from '../rate-limits/rate-limit-counters.js';
import { RateLimitPolicies } from '../rate-limits/rate-limit-policies.js';
import type { RateLimitPolicy, Tally } from '../rate-limits/rate-limit-policy.js';
import type { ExternalRequest } from './external-api.guard.js';

/** Metadata key of @RateLimited: the endpoint name a route is counted under. */
export const RATE_LIMITED = 'runline:rate-limited';

/**
 * The one place that decides the rate-limit headers: counts the request against its token's
 * limit for the endpoint, once the external pipeline knows the token, and sets the X-RateLimit
 * headers on whatever the route answers. Over the limit: 429 with Retry-After, before the body
 * is validated or anything is sent to run. No headers at all when RATE_LIMITS is off or the
 * request could not be counted (the counters' database did not answer).
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
    if (tally.count > policy.limit) throw new DomainError('rate-limited', API_ERRORS.rateLimitExceeded);
    return true;
  }
}

/** The spec's X-RateLimit headers; `Retry-After` (seconds, at least 1) only over the limit. */
export function rateLimitHeaders(policy: RateLimitPolicy, tally: Tally): Record<string, string> {
  const headers: Record<string, string> = {
    'x-ratelimit-limit': String(policy.limit),
    'x-ratelimit-remaining': String(Math.max(0, policy.limit - tally.count)),
    'x-ratelimit-reset': String(Math.ceil(tally.resetAtMs / 1000)),
  };
  if (tally.count > policy.limit) headers['retry-after'] = String(Math.max(1, Math.ceil((tally.resetAtMs - tally.nowMs) / 1000)));
  return headers;
}
