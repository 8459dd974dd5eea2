import { Inject, Injectable, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { TransactionRunner } from '@runline/db';
import type { Logger } from '@runline/observability';
import { BatchPruner, LOGGER } from '@runline/runtime';
import { SchedulerConfig } from '../config.js';
import { pruneFires } from './schedule-rows.repository.js';

const DAY_MS = 86_400_000;

/**
 * Keeps `schedule_fires` from growing for ever (an `every: "1s"` schedule records 86,400 fires
 * a day): on the job pruner's interval it deletes fires recorded more than
 * SCHEDULER_FIRE_RETENTION_DAYS ago, never a waiting one. A fire that old cannot come again: a
 * schedule's next fire only moves forward, and a backfill of that range would start it anew
 * (its run's idempotency key still answers with the old run while the invocation service keeps it).
 */
@Injectable()
export class ScheduleFirePruner implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly pruner: BatchPruner;

  constructor(transactions: TransactionRunner, @Inject(SchedulerConfig) config: SchedulerConfig, @Inject(LOGGER) logger: Logger) {
    this.pruner = new BatchPruner({
      what: 'old schedule fires',
      retentionMs: config.SCHEDULER_FIRE_RETENTION_DAYS * DAY_MS,
      intervalMs: config.SCHEDULER_PRUNE_INTERVAL_MS,
      batchSize: 1000,
      deleteBatch: (before, limit) => pruneFires(transactions.dataSource.manager, before, limit),
      logger,
    });
  }

  onApplicationBootstrap(): void {
    this.pruner.start();
  }

  onApplicationShutdown(): Promise<void> {
    return this.pruner.stop();
  }
}
