import { setTimeout as sleep } from 'node:timers/promises';
import { Inject, Injectable, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { TransactionRunner } from '@runline/db';
import type { Logger } from '@runline/observability';
import { FireTimer, LOGGER, PassLoop, systemTimers } from '@runline/runtime';
import { SchedulerConfig } from '../config.js';
import { decideFires, isFinalStatus, scheduleKey, type FireKind, type FireTiming } from './schedule-fire-decisions.js';
import { ScheduleMetrics } from './schedule-metrics.js';
import {
  advanceSchedule,
  claimDueSchedules,
  claimPendingFires,
  deferFires,
  fireKeyOf,
  insertFires,
  nextDueAfter,
  PENDING_FIRES_PER_SCHEDULE_PER_BATCH,
  recordFireOutcome,
  setLastStatus,
  type FireRecord,
  type ScheduleRow,
} from './schedule-rows.repository.js';
import { ScheduleRunStarts } from './schedule-run-starts.js';

/**
 * Passes are at least lead / this apart. A batch is open for about the lead (it waits for its
 * last fire's due time), so about this many + 1 batches are in flight at once when fires are
 * dense; SCHEDULER_FIRE_BATCHES_IN_FLIGHT must leave room for them, or claims wait and fires start late.
 */
const PASS_SPACING_DIVISOR = 2;

/** How long after an unconfirmed start a fire is sent again. */
const FIRE_RETRY_DELAY_MS = 1000;

/** A fire this batch starts: its schedule (locked), nominal and due time, and when it was recorded. */
interface FireToStart {
  schedule: ScheduleRow;
  scheduledTime: Date;
  dueAt: Date;
  kind: FireKind;
  recordedAt: Date;
}

/**
 * Fires published schedules on time, each fire once across replicas.
 *
 * The tables are the truth; this process keeps a timer for the earliest due schedule or waiting
 * fire (`FireTimer`, as the job firer) and a sweep every SCHEDULER_SWEEP_INTERVAL_MS as the
 * backstop. A pass claims, in one transaction, the schedules and waiting fires due within
 * SCHEDULER_FIRE_LEAD_MS (`FOR UPDATE SKIP LOCKED`: another replica's rows are skipped),
 * decides each schedule's fires (`decideFires`: pause, overlap, catch-up), records them (the
 * fire's primary key: a fire recorded before is not started again), moves each schedule to its
 * next fire, then starts every fire's run at its due time and records the run before the
 * transaction commits.
 *
 * Holding the rows until the runs are recorded is what makes a publish in force at its answer
 * (DESIGN section 8): the publish locks the same rows, so it waits for fires of the older form
 * to be recorded, and fires after it read the new form. A crash before the commit rolls the
 * claim back and the schedule fires again from another replica (or at restart) with the same
 * idempotency key, which the invocation service answers with the run it recorded, if any.
 *
 * A batch's start runs on after the pass has claimed it, so the next pass claims what comes due
 * next while it waits (at most SCHEDULER_FIRE_BATCHES_IN_FLIGHT batches at once). The first
 * pass runs at start, so fires missed while no scheduler ran are caught up at once.
 */
@Injectable()
export class ScheduleFirer implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly timer: FireTimer;
  private readonly leadMs: number;
  private readonly timing: FireTiming;
  private state: 'new' | 'running' | 'stopped' = 'new';
  private sweepTimer: NodeJS.Timeout | undefined;
  private readonly passes = new PassLoop(() => this.pass());
  private readonly inFlight = new Set<Promise<void>>();

  constructor(
    private readonly transactions: TransactionRunner,
    private readonly starts: ScheduleRunStarts,
    private readonly metrics: ScheduleMetrics,
    @Inject(SchedulerConfig) private readonly config: SchedulerConfig,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {
    this.leadMs = config.SCHEDULER_FIRE_LEAD_MS;
    this.timing = { missedAfterMs: config.SCHEDULER_MISSED_FIRE_AFTER_MS, bufferRecheckMs: config.SCHEDULER_BUFFER_RECHECK_MS };
    this.timer = new FireTimer(this.leadMs, () => this.wake(), systemTimers, Math.floor(this.leadMs / PASS_SPACING_DIVISOR));
  }

  onApplicationBootstrap(): void {
    this.state = 'running';
    this.sweepTimer = setInterval(() => this.wake(), this.config.SCHEDULER_SWEEP_INTERVAL_MS);
    this.sweepTimer.unref();
    this.wake();
  }

  /** Stops the timers; the batches in progress start their runs and commit. */
  async onApplicationShutdown(): Promise<void> {
    this.state = 'stopped';
    clearInterval(this.sweepTimer);
    this.timer.stop();
    await this.passes.stop();
    await Promise.allSettled([...this.inFlight]);
  }

  /** A schedule or a waiting fire is due at `dueAt` (committed here): fire it on time. */
  offer(dueAt: Date): void {
    if (this.state === 'running') this.timer.offer(dueAt.getTime());
  }

  wake(): void {
    if (this.state === 'running') this.passes.wake();
  }

  private async pass(): Promise<void> {
    this.timer.passStarted();
    let next: Date | null = null;
    let horizon = Date.now() + this.leadMs;
    try {
      let claimed: number;
      do {
        while (this.inFlight.size >= this.config.SCHEDULER_FIRE_BATCHES_IN_FLIGHT) await Promise.race(this.inFlight);
        const now = Date.now();
        horizon = now + this.leadMs;
        claimed = await this.fireBatch(new Date(now), new Date(horizon));
      } while (claimed >= this.config.SCHEDULER_BATCH_SIZE && this.state === 'running');
      // What this pass claimed is in flight and offers its next times when committed; rows due
      // by the horizon that it did not get are another transaction's, which does the same.
      next = await nextDueAfter(this.transactions.dataSource.manager, new Date(horizon));
    } catch (error) {
      this.logger.warn({ err: error }, 'schedule firing pass failed; the next sweep tries again');
    } finally {
      this.timer.passEnded(next?.getTime() ?? null, horizon);
    }
  }

  /** Claims a batch; resolves with how many rows it claimed once claimed, while its runs are started in the background. */
  private fireBatch(now: Date, horizon: Date): Promise<number> {
    return new Promise<number>((claimed, failed) => {
      let answered = false;
      const batch = this.transactions
        .run(async (tx) => {
          const schedules = await claimDueSchedules(tx.manager, horizon, this.config.SCHEDULER_BATCH_SIZE);
          const pending = await claimPendingFires(tx.manager, horizon, this.config.SCHEDULER_BATCH_SIZE);
          answered = true;
          claimed(Math.max(schedules.length, pending.length));
          if (schedules.length === 0 && pending.length === 0) return [];
          return this.fire(tx.manager, schedules, pending, now, horizon);
        })
        .then(
          (dueTimes) => {
            for (const dueAt of dueTimes) this.offer(dueAt);
          },
          (error: unknown) => {
            if (!answered) failed(error);
            // Rolled back: the schedules are due as before and the next pass fires them again.
            else this.logger.warn({ err: error }, 'schedule fire batch failed; its fires are taken up again');
          },
        )
        .finally(() => this.inFlight.delete(batch));
      this.inFlight.add(batch);
    });
  }

  /** Decides, records and starts the claimed fires; returns the due times to offer once committed. */
  private async fire(
    manager: EntityManager,
    schedules: ScheduleRow[],
    pending: FireToStart[],
    now: Date,
    horizon: Date,
  ): Promise<Date[]> {
    await this.refreshPreviousRuns(manager, schedules);
    const decided: FireToStart[] = [];
    const records: FireRecord[] = [];
    const dueTimes: Date[] = [];
    for (const schedule of schedules) {
      const decision = decideFires(
        {
          key: scheduleKey(schedule.projectId, schedule.scheduleId),
          definition: schedule.definition,
          anchorAt: schedule.anchorAt,
          paused: schedule.paused,
          nextFireAt: schedule.nextFireAt,
          bufferedFireAt: schedule.bufferedFireAt,
          previousRunActive: !isFinalStatus(schedule.lastStatus),
        },
        now,
        horizon,
        this.timing,
      );
      const base = { projectId: schedule.projectId, scheduleId: schedule.scheduleId, orgId: schedule.orgId };
      for (const fire of decision.start) {
        records.push({ ...base, scheduledTime: fire.scheduledTime, kind: fire.kind, status: 'STARTED', dueAt: fire.dueAt });
        decided.push({ schedule, ...fire, recordedAt: now });
      }
      for (const scheduledTime of decision.skipped) records.push({ ...base, scheduledTime, kind: 'SCHEDULED', status: 'SKIPPED', dueAt: scheduledTime });
      await advanceSchedule(manager, { ...base, nextFireAt: decision.nextFireAt, dueAt: decision.dueAt, bufferedFireAt: decision.bufferedFireAt, skipped: decision.skipped.length }, now);
      if (decision.dueAt) dueTimes.push(decision.dueAt);
      this.metrics.skipped(decision.skipped.length);
      this.metrics.droppedWhilePaused(decision.dropped.length);
    }
    // A fire recorded before (by a pass that committed, a backfill, run-now) is not started again;
    // a waiting one (a backfill's, a deferred one) is started now.
    const fresh = await insertFires(manager, records, now);
    const starting = [...pending, ...decided.filter((fire) => fresh.has(fireKeyOf(fire.schedule.projectId, fire.schedule.scheduleId, fire.scheduledTime)))];
    const retryAt = await this.startAll(manager, starting);
    if (retryAt) dueTimes.push(retryAt);
    // A schedule with more waiting fires than a batch takes of one (a backfill): the next pass,
    // once this batch has committed, takes the next ones.
    if (hasMoreWaiting(pending)) dueTimes.push(now);
    return dueTimes;
  }

  /**
   * Asks the invocation service about each schedule's previous run that is not final as last
   * heard, when overlap may depend on it: its end event may have come before its fire was
   * recorded, and then nothing else would tell.
   */
  private async refreshPreviousRuns(manager: EntityManager, schedules: ScheduleRow[]): Promise<void> {
    const unsure = schedules.filter((row) => row.lastInvocationId !== null && !isFinalStatus(row.lastStatus) && (row.definition.overlap !== 'ALLOW' || row.bufferedFireAt !== null));
    await Promise.all(
      unsure.map(async (row) => {
        const status = await this.starts.runStatus(row.orgId, row.lastInvocationId!);
        if (status === null || status === row.lastStatus) return;
        row.lastStatus = status;
        await setLastStatus(manager, row.projectId, row.scheduleId, row.lastInvocationId!, status);
      }),
    );
  }

  /**
   * Starts each fire at its due time: the fires of one schedule one after the other, oldest
   * first; schedules side by side. A start the invocation service did not confirm (no answer in
   * SCHEDULER_RUN_REQUEST_TIMEOUT_MS, or unavailable) may or may not have recorded its run: the
   * fire and the later ones of its schedule wait again and are sent again FIRE_RETRY_DELAY_MS
   * later with the same idempotency key (a run recorded meanwhile is answered as it is), for up
   * to SCHEDULER_FIRE_RETRY_FOR_MS after the fire was recorded; then it is NOT_STARTED. Returns
   * when the deferred fires are due, if any.
   */
  private async startAll(manager: EntityManager, fires: FireToStart[]): Promise<Date | null> {
    const bySchedule = new Map<string, FireToStart[]>();
    for (const fire of fires) {
      const key = scheduleKey(fire.schedule.projectId, fire.schedule.scheduleId);
      bySchedule.set(key, [...(bySchedule.get(key) ?? []), fire]);
    }
    const deferred: FireToStart[] = [];
    const outcomes = await Promise.all(
      [...bySchedule.values()].map(async (list) => {
        const results = [];
        const inOrder = list.sort((a, b) => a.scheduledTime.getTime() - b.scheduledTime.getTime());
        for (const [index, fire] of inOrder.entries()) {
          const wait = fire.dueAt.getTime() - Date.now();
          if (wait > 0) await sleep(wait);
          const sentAt = Date.now();
          const answer = await this.starts.start(fire.schedule, fire.scheduledTime);
          this.metrics.started(fire.kind, sentAt - fire.dueAt.getTime());
          if (answer.invocationId === null && answer.unavailable && Date.now() - fire.recordedAt.getTime() < this.config.SCHEDULER_FIRE_RETRY_FOR_MS) {
            this.metrics.deferred();
            this.logger.warn(
              { projectId: fire.schedule.projectId, scheduleId: fire.schedule.scheduleId, scheduledTime: fire.scheduledTime, reason: answer.reason, later: inOrder.length - index - 1 },
              'schedule fire start not confirmed; it is sent again shortly with the same key',
            );
            deferred.push(...inOrder.slice(index));
            break;
          }
          if (answer.invocationId === null) {
            this.metrics.refused();
            this.logger.info({ projectId: fire.schedule.projectId, scheduleId: fire.schedule.scheduleId, scheduledTime: fire.scheduledTime, reason: answer.reason }, 'schedule fire started no run');
          }
          results.push({ fire, answer, startedAt: new Date(sentAt) });
        }
        return results;
      }),
    );
    // Recorded in each schedule's order, so its latest fire is the last one started.
    for (const { fire, answer, startedAt } of outcomes.flat()) {
      await recordFireOutcome(manager, {
        projectId: fire.schedule.projectId,
        scheduleId: fire.schedule.scheduleId,
        scheduledTime: fire.scheduledTime,
        startedAt,
        invocationId: answer.invocationId,
        runStatus: answer.invocationId === null ? null : answer.status,
        reason: answer.invocationId === null ? answer.reason : null,
      });
    }
    if (deferred.length === 0) return null;
    const retryAt = new Date(Date.now() + FIRE_RETRY_DELAY_MS);
    await deferFires(manager, deferred.map((fire) => ({ projectId: fire.schedule.projectId, scheduleId: fire.schedule.scheduleId, scheduledTime: fire.scheduledTime })), retryAt);
    return retryAt;
  }
}

/** True when some schedule's claimed fires fill its share of a batch: more of its fires may wait. */
function hasMoreWaiting(pending: ReadonlyArray<{ schedule: ScheduleRow }>): boolean {
  const perSchedule = new Map<string, number>();
  for (const fire of pending) {
    const key = scheduleKey(fire.schedule.projectId, fire.schedule.scheduleId);
    const count = (perSchedule.get(key) ?? 0) + 1;
    if (count >= PENDING_FIRES_PER_SCHEDULE_PER_BATCH) return true;
    perSchedule.set(key, count);
  }
  return false;
}
