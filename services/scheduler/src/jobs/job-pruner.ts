import { Inject, Injectable, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { TransactionRunner } from '@runline/db';
import type { Logger } from '@runline/observability';
import { BatchPruner, LOGGER } from '@runline/runtime';
import { SchedulerConfig } from '../config.js';
import { pruneEndedJobs } from './scheduled-jobs.repository.js';

const DAY_MS = 86_400_000;

/**
 * Keeps `scheduled_jobs` from growing for ever: every SCHEDULER_PRUNE_INTERVAL_MS (and at
 * start) it deletes the jobs that fired or were cancelled more than SCHEDULER_RETENTION_DAYS
 * ago, 1,000 a statement. Waiting jobs are never touched. Replicas may prune at the same time:
 * each skips the rows another holds.
 */
@Injectable()
export class JobPruner implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly pruner: BatchPruner;

  constructor(transactions: TransactionRunner, @Inject(SchedulerConfig) config: SchedulerConfig, @Inject(LOGGER) logger: Logger) {
    this.pruner = new BatchPruner({
      what: 'ended scheduler jobs',
      retentionMs: config.SCHEDULER_RETENTION_DAYS * DAY_MS,
      intervalMs: config.SCHEDULER_PRUNE_INTERVAL_MS,
      batchSize: 1000,
      deleteBatch: (endedBefore, limit) => pruneEndedJobs(transactions.dataSource.manager, endedBefore, limit),
      logger,
    });
  }

  onApplicationBootstrap(): void {
    this.pruner.start();
  }

  onApplicationShutdown(): Promise<void> {
    return this.pruner.stop();
  }

  /** One round (or the one in progress): resolves with how many jobs it deleted. */
  prune(now: Date = new Date()): Promise<number> {
    return this.pruner.prune(now);
  }
}
