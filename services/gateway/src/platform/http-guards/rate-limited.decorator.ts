import { applyDecorators, SetMetadata, UseGuards } from '@nestjs/common';
import { RATE_LIMITED, RateLimitGuard } from './rate-limit.guard.js';

/**
 * Puts a route under the per-token rate limit, counted under `endpoint` (each endpoint has its
 * own counter). Opt-in: routes without it (polling, dead letters, invocations) are not limited.
 * Write it ABOVE @ExternalRoute: decorators apply bottom-up, and the limit needs the caller
 * that ExternalApiGuard identifies.
 */
export const RateLimited = (endpoint: string) => applyDecorators(SetMetadata(RATE_LIMITED, endpoint), UseGuards(RateLimitGuard));
