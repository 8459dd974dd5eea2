/**
 * What a firing pass does with one claimed schedule: pure, given the schedule as stored, the
 * state of its previous run and the clock. The fire times themselves (cron, time zones, daylight
 * saving, catch-up selection, jitter) come from the engine's schedule core; this module decides
 * pause, overlap (SKIP, BUFFER_ONE, ALLOW) and whether a late fire is a catch-up.
 */
import { catchUpFires, jitterMs, nextFireTime, type ScheduleDefinition } from '@runline/engine';

/** Why a fire runs: its place in the schedule, a catch-up after an outage, the console's run-now or backfill, or a buffered fire released. */
export type FireKind = 'SCHEDULED' | 'CATCH_UP' | 'TRIGGER' | 'BACKFILL' | 'BUFFERED';

/** Run statuses after which a run does nothing more (spec: States and transitions). */
const FINAL_STATUSES: ReadonlySet<string> = new Set(['SUCCEEDED', 'FAILED', 'TIMEOUT', 'CANCELLED']);

/** Whether the schedule's previous run is over (or there was none): overlap does not apply. */
export function isFinalStatus(status: string | null): boolean {
  return status === null || FINAL_STATUSES.has(status);
}

/** The key jitter and idempotency are derived from: one per schedule of a project. */
export function scheduleKey(projectId: string, scheduleId: string): string {
  return `${projectId}/${scheduleId}`;
}

/** When a fire with nominal time `nominal` is to start: the nominal time plus its deterministic jitter. */
export function dueTimeOf(key: string, nominal: Date, definition: Pick<ScheduleDefinition, 'jitterSeconds'>): Date {
  return new Date(nominal.getTime() + jitterMs(key, nominal, definition.jitterSeconds));
}

/** The schedule as a firing pass reads it from its row. */
export interface ClaimedScheduleState {
  key: string;
  definition: ScheduleDefinition;
  anchorAt: Date;
  paused: boolean;
  nextFireAt: Date | null;
  bufferedFireAt: Date | null;
  /** Whether the schedule's previous run is still not final (as last heard or asked). */
  previousRunActive: boolean;
}

export interface FireTiming {
  /** A fire whose due time passed longer ago than this was missed (no scheduler ran): catch-up applies. */
  missedAfterMs: number;
  /** While a BUFFER_ONE fire waits, the running run's status is looked at again this often (events are the fast path). */
  bufferRecheckMs: number;
}

/** A fire to start: its nominal time, when it starts, and why. */
export interface PlannedFire {
  scheduledTime: Date;
  dueAt: Date;
  kind: FireKind;
}

export interface FireDecision {
  start: PlannedFire[];
  /** Nominal times recorded as skipped (SKIP, or BUFFER_ONE with one already waiting). */
  skipped: Date[];
  /** Nominal times dropped because the schedule is paused. */
  dropped: Date[];
  bufferedFireAt: Date | null;
  nextFireAt: Date | null;
  /** When the row is to be looked at next (null: never, until a publish or a resume). */
  dueAt: Date | null;
}

/**
 * Decides a claimed schedule's fires at `now`, for due times up to `horizon` (a pass claims a
 * little ahead and starts each fire at its due time).
 *
 * - A waiting BUFFER_ONE fire starts once the previous run is final.
 * - The next fire, if due by `horizon`: missed by more than `missedAfterMs` → the catch-up
 *   policy picks which of the missed fires run (they run one after the other, oldest first,
 *   and overlap does not hold them back: they are the outage's backlog); otherwise one fire,
 *   subject to overlap. Paused: every due fire is dropped (resume catches nothing up).
 * - The next fire time follows the nominal time (or now, after a catch-up), so one late pass
 *   does not shift the schedule.
 */
export function decideFires(state: ClaimedScheduleState, now: Date, horizon: Date, timing: FireTiming): FireDecision {
  const { definition, key, anchorAt } = state;
  const start: PlannedFire[] = [];
  const skipped: Date[] = [];
  const dropped: Date[] = [];
  let buffered = state.bufferedFireAt;
  let running = state.previousRunActive;

  if (buffered !== null && !running) {
    start.push({ scheduledTime: buffered, dueAt: now, kind: 'BUFFERED' });
    buffered = null;
    running = true;
  }

  let nextFireAt = state.nextFireAt;
  if (nextFireAt !== null) {
    const dueAt = dueTimeOf(key, nextFireAt, definition);
    if (dueAt.getTime() <= horizon.getTime()) {
      const missed = dueAt.getTime() < now.getTime() - timing.missedAfterMs;
      if (missed) {
        const caughtUp = state.paused ? [] : catchUpFires(definition, new Date(nextFireAt.getTime() - 1), now, anchorAt);
        if (state.paused) dropped.push(nextFireAt);
        for (const scheduledTime of caughtUp) start.push({ scheduledTime, dueAt: now, kind: 'CATCH_UP' });
        if (caughtUp.length > 0) running = true;
        nextFireAt = nextFireTime(definition, now, anchorAt);
      } else {
        if (state.paused) dropped.push(nextFireAt);
        else if (!running || definition.overlap === 'ALLOW') {
          start.push({ scheduledTime: nextFireAt, dueAt, kind: 'SCHEDULED' });
          running = true;
        } else if (definition.overlap === 'BUFFER_ONE' && buffered === null) buffered = nextFireAt;
        else skipped.push(nextFireAt);
        nextFireAt = nextFireTime(definition, nextFireAt, anchorAt);
      }
    }
  }

  const nextDue = nextFireAt === null ? null : dueTimeOf(key, nextFireAt, definition).getTime();
  const recheck = buffered === null ? null : now.getTime() + timing.bufferRecheckMs;
  const candidates = [nextDue, recheck].filter((at): at is number => at !== null);
  return {
    start,
    skipped,
    dropped,
    bufferedFireAt: buffered,
    nextFireAt,
    dueAt: candidates.length === 0 ? null : new Date(Math.min(...candidates)),
  };
}
