import { Inject, Injectable, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { TransactionRunner } from '@runline/db';
import type { Logger } from '@runline/observability';
import { LOGGER } from '@runline/runtime';
import { WebhookConfig } from '../config.js';
import { pruneDeliveries } from './hook-deliveries.repository.js';

/**
 * Deletes delivery ids past their 24-hour window now and then. Correctness does not depend on
 * it (an old row is replaced when its id comes again); it only keeps the table small.
 */
@Injectable()
export class DeliveryPruner implements OnModuleInit, OnApplicationShutdown {
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly transactions: TransactionRunner,
    @Inject(WebhookConfig) private readonly config: WebhookConfig,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  onModuleInit(): void {
    this.timer = setInterval(() => void this.prune(), this.config.WEBHOOK_DELIVERY_PRUNE_INTERVAL_MS);
    this.timer.unref();
  }

  onApplicationShutdown(): void {
    clearInterval(this.timer);
  }

  async prune(): Promise<void> {
    try {
      const deleted = await pruneDeliveries(this.transactions.dataSource.manager);
      if (deleted > 0) this.logger.debug({ deleted }, 'pruned delivery ids past their dedupe window');
    } catch (error) {
      this.logger.warn({ err: error }, 'could not prune delivery ids');
    }
  }
}
