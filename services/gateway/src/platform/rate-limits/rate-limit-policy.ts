/** Requests allowed per token, per endpoint, per window. */
export interface RateLimitPolicy {
  limit: number;
  windowMs: number;
}

/** The platform default of the spec: 120 requests per 60 seconds. */
export const DEFAULT_RATE_LIMIT: RateLimitPolicy = { limit: 120, windowMs: 60_000 };

export interface RateLimitSetting {
  limit: number | null;
  windowMs: number | null;
}

/**
 * The effective limit: for the number and for the window each, the first present of the
 * project's setting, the organization plan's, the platform default.
 */
export function effectivePolicy(project: RateLimitSetting, plan: RateLimitSetting): RateLimitPolicy {
  return {
    limit: project.limit ?? plan.limit ?? DEFAULT_RATE_LIMIT.limit,
    windowMs: project.windowMs ?? plan.windowMs ?? DEFAULT_RATE_LIMIT.windowMs,
  };
}

/** Where a request stands in its window, as the shared counter answered. */
export interface Tally {
  /** This request's place among those admitted in the window (1 = the first); above the limit: refused. */
  count: number;
  /** When the window ends, epoch ms (on the database's clock, which every replica shares). */
  resetAtMs: number;
  /** The database's clock when it counted, epoch ms. */
  nowMs: number;
}
