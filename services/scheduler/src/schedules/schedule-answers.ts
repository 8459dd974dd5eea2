/**
 * A schedule as the console API answers it (DESIGN.md section 12), pure: the definition's fields
 * with `null` for what the schedule does not set, its state (paused, skippedCount), the next five
 * fire times and its latest fire.
 */
import { nextFireTimes } from '@runline/engine';
import type { ScheduleRow } from './schedule-rows.repository.js';

/** How many upcoming fire times a schedule answers with. */
export const NEXT_FIRE_TIMES_SHOWN = 5;

export interface ScheduleAnswer {
  id: string;
  cron: string | null;
  every: string | null;
  timezone: string;
  enabled: boolean;
  paused: boolean;
  overlap: string;
  catchUp: string;
  catchUpWindowSeconds: number;
  jitterSeconds: number;
  startAt: string | null;
  endAt: string | null;
  payload: unknown;
  /** ISO 8601 UTC, nominal times (before jitter); a paused schedule's are those it would fire at if resumed; none when disabled. */
  nextFireTimes: string[];
  lastFire: { scheduledTime: string; invocationId: string; status: string | null } | null;
  skippedCount: number;
}

export function scheduleAnswer(row: ScheduleRow, now: Date): ScheduleAnswer {
  const definition = row.definition;
  const upcoming = definition.enabled ? nextFireTimes(definition, now, row.anchorAt, NEXT_FIRE_TIMES_SHOWN) : [];
  return {
    id: row.scheduleId,
    cron: definition.cron ?? null,
    every: definition.every ?? null,
    // `timezone` means nothing to an interval; it is answered as UTC.
    timezone: definition.every ? 'UTC' : definition.timezone,
    enabled: definition.enabled,
    paused: row.paused,
    overlap: definition.overlap,
    catchUp: definition.catchUp,
    catchUpWindowSeconds: definition.catchUpWindowSeconds,
    jitterSeconds: definition.jitterSeconds,
    startAt: definition.startAt ?? null,
    endAt: definition.endAt ?? null,
    payload: definition.payload ?? null,
    nextFireTimes: upcoming.map((at) => at.toISOString()),
    lastFire:
      row.lastFireAt !== null && row.lastInvocationId !== null
        ? { scheduledTime: row.lastFireAt.toISOString(), invocationId: row.lastInvocationId, status: row.lastStatus }
        : null,
    skippedCount: row.skippedCount,
  };
}
