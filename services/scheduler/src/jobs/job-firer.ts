import { Inject, Injectable, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { Counter, Histogram, type Registry } from 'prom-client';
import { TransactionRunner } from '@runline/db';
import type { Logger } from '@runline/observability';
import { FireTimer, LOGGER, PassLoop, METRICS_REGISTRY, systemTimers } from '@runline/runtime';
import { SchedulerConfig } from '../config.js';
import { jobFiredMessage } from './job-messages.js';
import { claimDueJobs, nextDueAt } from './scheduled-jobs.repository.js';

/** Passes are at least lead / this apart (see JobFirer). */
const PASS_SPACING_DIVISOR = 4;

/**
 * Fires jobs on time. The table is the truth; this process keeps only a timer for the earliest
 * waiting job (`FireTimer`) and a sweep every SCHEDULER_SWEEP_INTERVAL_MS as the backstop (jobs
 * another replica received, a lost wake-up, clock drift).
 *
 * A firing pass claims the jobs due by now + SCHEDULER_FIRE_LEAD_MS (JS clock, passed to the
 * query so timer and query agree) and emits one ScheduledJobFired each through the outbox, in
 * one transaction per batch; a full batch is followed by another. Then it reads the earliest
 * due time left (one step down the partial index) and arms the timer for it, but at least a
 * quarter of the lead after this pass: jobs due close together are claimed by one pass, each
 * still between 3/4 of the lead and the whole lead ahead of its time. Passes never overlap in a
 * process; replicas share the table through `SKIP LOCKED`.
 *
 * The first pass runs at start, so jobs that came due while no scheduler ran fire at once.
 */
@Injectable()
export class JobFirer implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly timer: FireTimer;
  private readonly leadMs: number;
  private readonly batchSize: number;
  private state: 'new' | 'running' | 'stopped' = 'new';
  private sweepTimer: NodeJS.Timeout | undefined;
  private readonly passes = new PassLoop(() => this.pass());
  private readonly firedTotal: Counter;
  private readonly fireDelay: Histogram;

  constructor(
    private readonly transactions: TransactionRunner,
    @Inject(SchedulerConfig) private readonly config: SchedulerConfig,
    @Inject(LOGGER) private readonly logger: Logger,
    @Inject(METRICS_REGISTRY) registry: Registry,
  ) {
    this.leadMs = config.SCHEDULER_FIRE_LEAD_MS;
    this.batchSize = config.SCHEDULER_BATCH_SIZE;
    this.timer = new FireTimer(this.leadMs, () => this.wake(), systemTimers, Math.floor(this.leadMs / PASS_SPACING_DIVISOR));
    this.firedTotal = new Counter({
      name: 'runline_scheduler_jobs_fired_total',
      help: 'Jobs this replica claimed and fired.',
      registers: [registry],
    });
    this.fireDelay = new Histogram({
      name: 'runline_scheduler_fire_delay_seconds',
      help: 'From the moment a job became claimable (due time minus the fire lead) to its claim.',
      buckets: [0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.5, 1, 5, 60],
      registers: [registry],
    });
  }

  onApplicationBootstrap(): void {
    this.state = 'running';
    this.sweepTimer = setInterval(() => this.wake(), this.config.SCHEDULER_SWEEP_INTERVAL_MS);
    this.sweepTimer.unref();
    this.wake();
  }

  /** Stops the timers and waits for the pass in progress (its outbox rows leave with the relay's final flush). */
  async onApplicationShutdown(): Promise<void> {
    this.state = 'stopped';
    clearInterval(this.sweepTimer);
    this.sweepTimer = undefined;
    this.timer.stop();
    await this.passes.stop();
  }

  /** A job due at `dueAt` was inserted or moved here (committed): fire it on time. */
  jobScheduled(dueAt: Date): void {
    if (this.state === 'running') this.timer.offer(dueAt.getTime());
  }

  /** A job due at `dueAt` was cancelled or moved away here (committed): re-arm if it was the armed one. */
  jobWithdrawn(dueAt: Date): void {
    if (this.state === 'running' && this.timer.withdraw(dueAt.getTime())) this.wake();
  }

  /** Runs a firing pass now, or right after the one in progress. */
  wake(): void {
    if (this.state !== 'running') return;
    this.passes.wake();
  }

  private async pass(): Promise<void> {
    this.timer.passStarted();
    let next: Date | null = null;
    let horizon = 0;
    try {
      let claimed: number;
      do {
        const now = Date.now();
        horizon = now + this.leadMs;
        claimed = await this.fireBatch(now, horizon);
      } while (claimed === this.batchSize && this.state === 'running');
      next = await nextDueAt(this.transactions.dataSource.manager);
    } catch (error) {
      this.logger.warn({ err: error }, 'firing pass failed; the next sweep tries again');
    } finally {
      this.timer.passEnded(next?.getTime() ?? null, horizon);
    }
  }

  private async fireBatch(now: number, horizon: number): Promise<number> {
    const firedAt = new Date(now);
    const jobs = await this.transactions.run(async (tx) => {
      const claimed = await claimDueJobs(tx.manager, new Date(horizon), firedAt, this.batchSize);
      for (const job of claimed) tx.emit(jobFiredMessage(job, firedAt));
      return claimed;
    });
    if (jobs.length > 0) {
      this.firedTotal.inc(jobs.length);
      for (const job of jobs) this.fireDelay.observe(Math.max(0, now - (job.dueAt.getTime() - this.leadMs)) / 1000);
      const latest = jobs[jobs.length - 1]!;
      this.logger.debug({ count: jobs.length, earliestDueAt: jobs[0]!.dueAt, latestDueAt: latest.dueAt, firedAt }, 'fired jobs');
    }
    return jobs.length;
  }
}
