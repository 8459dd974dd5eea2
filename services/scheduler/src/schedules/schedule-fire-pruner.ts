import { Inject, Injectable, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { TransactionRunner } from '@runline/db';
import type { Logger } from '@runline/observability';
import { LOGGER } from '@runline/runtime';
import { SchedulerConfig } from '../config.js';
import { pruneFires } from './schedule-rows.repository.js';

const PRUNE_BATCH = 1000;
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
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;

  constructor(
    private readonly transactions: TransactionRunner,
    @Inject(SchedulerConfig) private readonly config: SchedulerConfig,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  onApplicationBootstrap(): void {
    this.timer = setInterval(() => this.prune(), this.config.SCHEDULER_PRUNE_INTERVAL_MS);
    this.timer.unref();
    this.prune();
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    await this.running;
  }

  private prune(): void {
    this.running ??= this.deleteOld().finally(() => (this.running = undefined));
  }

  private async deleteOld(): Promise<void> {
    const before = new Date(Date.now() - this.config.SCHEDULER_FIRE_RETENTION_DAYS * DAY_MS);
    let total = 0;
    try {
      let deleted: number;
      do {
        deleted = await pruneFires(this.transactions.dataSource.manager, before, PRUNE_BATCH);
        total += deleted;
      } while (deleted === PRUNE_BATCH && !this.stopped);
      if (total > 0) this.logger.info({ deleted: total, before }, 'pruned old schedule fires');
    } catch (error) {
      this.logger.warn({ err: error, deletedSoFar: total }, 'pruning schedule fires failed; the next round tries again');
    }
  }
}
