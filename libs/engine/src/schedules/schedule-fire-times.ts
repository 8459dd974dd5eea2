import { Cron } from 'croner';
import { parseEvery } from './schedule-definition.normalizer.js';
import { SCHEDULE_LIMITS, type ScheduleDefinition } from './schedule-definition.types.js';
import { instantOfWallClock, wallClockOf } from './zone-wall-clock.js';

/**
 * A schedule's nominal fire times (before jitter). The set of them is fixed by the schedule
 * and its anchor (when it came into force), and every function below reads the same set:
 * - cron: each wall-clock time in `timezone` that matches, at or after `startAt`. A time the
 *   clock skips fires once, at the first instant after the gap; a time the clock shows twice
 *   fires once, at its first occurrence (zone-wall-clock.ts).
 * - every: `startAt + k × interval` for k ≥ 0 when `startAt` is set; otherwise the grid
 *   `anchor + k × interval`, whose first time after the anchor is one interval later (earlier
 *   points of the grid are what a backfill of a past range runs).
 * - nothing after `endAt` (inclusive bound), and nothing at all for a disabled schedule.
 */

// Croner matches the pattern against naive wall-clock times (offset 0); the time zone and its
// daylight saving rules are applied here, the same way for every pattern. Croner's own handling
// differs by pattern: a single fixed time (`30 2 * * *`) follows the rules above, but a list,
// range or step (`30 2,14 * * *`, `*/30 * * * *`) skips times in a gap and fires twice on a
// repeated hour, which DESIGN section 12 does not allow.
const crons = new Map<string, Cron>();
const MAX_CACHED_CRONS = 10_000;

function cronOf(expression: string): Cron {
  let cron = crons.get(expression);
  if (cron === undefined) {
    if (crons.size >= MAX_CACHED_CRONS) crons.clear();
    cron = compileCron(expression);
    crons.set(expression, cron);
  }
  return cron;
}

/** Croner set up for schedules: 5 or 6 fields, day-of-month OR day-of-week as Vixie cron. */
export function compileCron(expression: string): Cron {
  return new Cron(expression, { utcOffset: 0, mode: '5-or-6-parts', domAndDow: false });
}

/** A walk past this many matches without a fire means a broken pattern, not a schedule. */
const MAX_MATCHES_PER_STEP = 100_000;

/** The first nominal fire strictly after `after`, or null when there is none. */
export function nextFireTime(schedule: ScheduleDefinition, after: Date, anchor: Date): Date | null {
  if (!schedule.enabled) return null;
  const startMs = schedule.startAt === null ? undefined : Date.parse(schedule.startAt);
  const endMs = schedule.endAt === null ? undefined : Date.parse(schedule.endAt);
  // A fire at startAt itself counts: search from just before it.
  const afterMs = startMs === undefined ? after.getTime() : Math.max(after.getTime(), startMs - 1);
  const next = schedule.cron !== null ? nextCronTime(schedule.cron, schedule.timezone, afterMs) : nextEveryTime(schedule, afterMs, anchor.getTime(), startMs);
  if (next === null || (endMs !== undefined && next > endMs)) return null;
  return new Date(next);
}

function nextCronTime(expression: string, timeZone: string, afterMs: number): number | null {
  const cron = cronOf(expression);
  // Every wall-clock time up to the clock at `after` maps to an instant at or before `after`,
  // so the walk starts there; on a repeated hour's second pass the first matches still map to
  // the first pass and are passed over.
  let cursor = Math.floor(wallClockOf(timeZone, afterMs) / 1000) * 1000;
  for (let step = 0; step < MAX_MATCHES_PER_STEP; step += 1) {
    const match = cron.nextRun(new Date(cursor));
    if (match === null) return null;
    const instant = instantOfWallClock(timeZone, match.getTime());
    if (instant > afterMs) return instant;
    cursor = match.getTime();
  }
  return null;
}

function nextEveryTime(schedule: ScheduleDefinition, afterMs: number, anchorMs: number, startMs: number | undefined): number | null {
  const intervalMs = schedule.every === null ? undefined : parseEvery(schedule.every);
  if (intervalMs === undefined) return null;
  const base = startMs ?? anchorMs;
  const steps = Math.floor((afterMs - base) / intervalMs) + 1;
  return base + (startMs === undefined ? steps : Math.max(steps, 0)) * intervalMs;
}

/** The next `count` nominal fires strictly after `after`, oldest first. */
export function nextFireTimes(schedule: ScheduleDefinition, after: Date, anchor: Date, count: number): Date[] {
  const fires: Date[] = [];
  for (let next = nextFireTime(schedule, after, anchor); next !== null && fires.length < count; next = nextFireTime(schedule, next, anchor)) {
    fires.push(next);
  }
  return fires;
}

/** The nominal fires in [from, to), oldest first, at most `limit` (backfill asks limit + 1 to detect too many). */
export function fireTimesBetween(schedule: ScheduleDefinition, from: Date, to: Date, anchor: Date, limit: number): Date[] {
  const fires: Date[] = [];
  const toMs = to.getTime();
  let next = nextFireTime(schedule, new Date(from.getTime() - 1), anchor);
  while (next !== null && next.getTime() < toMs && fires.length < limit) {
    fires.push(next);
    next = nextFireTime(schedule, next, anchor);
  }
  return fires;
}

/**
 * The fires a catch-up runs for those missed in (missedFrom, now], oldest first: NONE none;
 * LATEST the latest one, if it is within the window (catchUpWindowSeconds before `now`); ALL
 * each one within the window, the latest SCHEDULE_LIMITS.maxCatchUpFires when more were missed.
 */
export function catchUpFires(schedule: ScheduleDefinition, missedFrom: Date, now: Date, anchor: Date): Date[] {
  if (schedule.catchUp === 'NONE') return [];
  const fromMs = Math.max(missedFrom.getTime() + 1, now.getTime() - schedule.catchUpWindowSeconds * 1000);
  const toMs = now.getTime() + 1;
  if (fromMs >= toMs) return [];
  const count = schedule.catchUp === 'LATEST' ? 1 : SCHEDULE_LIMITS.maxCatchUpFires;
  return latestFireTimes(schedule, fromMs, toMs, anchor, count);
}

/**
 * The latest `count` fires in [fromMs, toMs), oldest first. Fires are only found forwards, so
 * the range is widened backwards from `toMs` until it holds enough, which keeps a dense
 * schedule (every second over a week's window) from being walked from its oldest fire.
 */
function latestFireTimes(schedule: ScheduleDefinition, fromMs: number, toMs: number, anchor: Date, count: number): Date[] {
  for (let spanMs = 60_000; ; spanMs *= 8) {
    const startMs = Math.max(fromMs, toMs - spanMs);
    const fires = fireTimesBetween(schedule, new Date(startMs), new Date(toMs), anchor, Number.POSITIVE_INFINITY);
    if (fires.length >= count || startMs === fromMs) return fires.slice(-count);
  }
}
