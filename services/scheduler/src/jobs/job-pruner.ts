import { Inject, Injectable, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { TransactionRunner } from '@runline/db';
import type { Logger } from '@runline/observability';
import { LOGGER } from '@runline/runtime';
import { SchedulerConfig } from '../config.js';
import { pruneEndedJobs } from './scheduled-jobs.repository.js';

/** Jobs deleted per statement: short statements, so firing passes never wait long behind one. */
const PRUNE_BATCH = 1000;
const DAY_MS = 86_400_000;

/**
 * Keeps `scheduled_jobs` from growing for ever: every SCHEDULER_PRUNE_INTERVAL_MS (and at
 * start) it deletes the jobs that fired or were cancelled more than SCHEDULER_RETENTION_DAYS
 * ago, in batches. Waiting jobs are never touched. Replicas may prune at the same time: each
 * skips the rows another holds.
 */
@Injectable()
export class JobPruner implements OnApplicationBootstrap, OnApplicationShutdown {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<number> | undefined;
  private stopped = false;

  constructor(
    private readonly transactions: TransactionRunner,
    @Inject(SchedulerConfig) private readonly config: SchedulerConfig,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  onApplicationBootstrap(): void {
    this.timer = setInterval(() => void this.prune(), this.config.SCHEDULER_PRUNE_INTERVAL_MS);
    this.timer.unref();
    void this.prune();
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    await this.running;
  }

  /** One round (or the one in progress): resolves with how many jobs it deleted. */
  prune(now: Date = new Date()): Promise<number> {
    this.running ??= this.deleteEnded(now).finally(() => (this.running = undefined));
    return this.running;
  }

  private async deleteEnded(now: Date): Promise<number> {
    const endedBefore = new Date(now.getTime() - this.config.SCHEDULER_RETENTION_DAYS * DAY_MS);
    let total = 0;
    try {
      let deleted: number;
      do {
        deleted = await pruneEndedJobs(this.transactions.dataSource.manager, endedBefore, PRUNE_BATCH);
        total += deleted;
      } while (deleted === PRUNE_BATCH && !this.stopped);
      if (total > 0) this.logger.info({ deleted: total, endedBefore }, 'pruned ended scheduler jobs');
    } catch (error) {
      this.logger.warn({ err: error, deletedSoFar: total }, 'pruning ended scheduler jobs failed; the next round tries again');
    }
    return total;
  }
}
