/**
 * An organization and its plan (a row of `organizations`): quota and rate limits, null = not
 * set by the plan. The bigint columns (`monthly_quota`, `rate_limit_window_ms`) are read as
 * numbers; their values stay far below 2^53.
 */
export interface OrganizationEntity {
  id: string;
  name: string;
  monthlyQuota: number | null;
  rateLimitPerMinute: number | null;
  rateLimitWindowMs: number | null;
  renewalDay: number | null;
  /** Grows by one with every plan change; orders the plan copies other services keep. */
  planVersion: number;
  createdAt: Date;
  updatedAt: Date;
}
