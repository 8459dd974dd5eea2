import type { JsonValue } from '../json.value.js';

/**
 * Schedule triggers of an automation (`workflow.schedules`, DESIGN section 12): repeating runs
 * of the workflow, by a cron expression in a time zone or by a fixed interval.
 */

/** What a fire does while the schedule's previous run is not final. */
export type OverlapPolicy = 'SKIP' | 'BUFFER_ONE' | 'ALLOW';
export const OVERLAP_POLICIES: readonly OverlapPolicy[] = ['SKIP', 'BUFFER_ONE', 'ALLOW'];

/** What happens to fires missed while no scheduler ran. */
export type CatchUpPolicy = 'NONE' | 'LATEST' | 'ALL';
export const CATCH_UP_POLICIES: readonly CatchUpPolicy[] = ['NONE', 'LATEST', 'ALL'];

/** A schedule as written in the definition: every field but `id` may be left out. */
export interface ScheduleConfig {
  readonly id: string;
  /** 5 fields, or 6 with seconds first. Exactly one of `cron` and `every` is set. */
  readonly cron?: string | null;
  /** An elapsed-time interval: `30s`, `15m`, `2h`, `1d` (1s to 31d). */
  readonly every?: string | null;
  /** IANA name for `cron`; ignored by `every`. */
  readonly timezone?: string;
  readonly payload?: Readonly<Record<string, JsonValue>>;
  readonly overlap?: OverlapPolicy;
  readonly catchUp?: CatchUpPolicy;
  readonly catchUpWindowSeconds?: number;
  readonly jitterSeconds?: number;
  /** ISO 8601 with `Z` or an offset. Fires are at or after it. */
  readonly startAt?: string | null;
  /** ISO 8601 with `Z` or an offset. Fires are at or before it. */
  readonly endAt?: string | null;
  readonly enabled?: boolean;
}

/**
 * A schedule with every default applied (`normalizeSchedule`): what the gateway answers, what
 * the scheduler stores and fires. `startAt` and `endAt` are ISO 8601 in UTC, `cron` has single
 * spaces between its fields, and `timezone` is "UTC" for an `every` schedule.
 */
export interface ScheduleDefinition {
  id: string;
  cron: string | null;
  every: string | null;
  timezone: string;
  payload: JsonValue;
  overlap: OverlapPolicy;
  catchUp: CatchUpPolicy;
  catchUpWindowSeconds: number;
  jitterSeconds: number;
  startAt: string | null;
  endAt: string | null;
  enabled: boolean;
}

export const SCHEDULE_DEFAULTS = {
  timezone: 'UTC',
  overlap: 'SKIP',
  catchUp: 'LATEST',
  catchUpWindowSeconds: 3600,
  jitterSeconds: 0,
  enabled: true,
} as const satisfies Partial<ScheduleDefinition>;

/** Schedule ids: lowercase letters, digits and "-", 1 to 64 of them. */
export const SCHEDULE_ID_PATTERN = '^[a-z0-9-]{1,64}$';

export const SCHEDULE_LIMITS = {
  /** Schedules in one automation. */
  maxSchedules: 20,
  /** Shortest and longest `every` interval. */
  minEveryMs: 1000,
  maxEveryMs: 31 * 24 * 3600 * 1000,
  /**
   * Jitter spreads fires of the same minute; an hour is enough for that and keeps a fire
   * within the hour it was due. An `every` schedule's jitter must also be shorter than its
   * interval, so fires keep their order.
   */
  maxJitterSeconds: 3600,
  /** A week: an outage longer than that is an incident to handle by hand (backfill). */
  maxCatchUpWindowSeconds: 7 * 24 * 3600,
  /** Fires one catch-up (policy ALL) runs at most; the latest ones when more were missed. */
  maxCatchUpFires: 1000,
  /** Fires one backfill runs at most (DESIGN section 12: more → 400). */
  maxBackfillFires: 1000,
} as const;

/** The `schedulerJobName` of a fire's run. */
export const scheduleJobName = (scheduleId: string): string => `schedule:${scheduleId}`;
