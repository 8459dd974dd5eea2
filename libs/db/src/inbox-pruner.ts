import type { DataSource } from 'typeorm';
import { errorMessage } from './relay-logger.js';
import { qualified, serviceSchemaOf } from './service-schema.js';

export interface InboxPrunerOptions {
  /** How long processed message ids are kept. Default 30 days. */
  retentionMs?: number;
  /** How often pruning runs (and once at start). Default 1 hour. */
  intervalMs?: number;
  logger?: InboxPrunerLogger;
}

/** Shaped like pino's `logger.info(obj, msg)`, so a pino logger fits as is. */
export interface InboxPrunerLogger {
  info(obj: Record<string, unknown>, msg: string): void;
  warn(obj: Record<string, unknown>, msg: string): void;
}

/**
 * Why 30 days: a message id can come to a consumer again (1) while JetStream redelivers it
 * (at most maxDeliver × (ack wait + backoff), minutes), (2) when a relay sends an outbox row
 * again that it published but could not mark (at its next sweep, or when its service starts
 * again), and (3) when an outbox row is published only after an outage of the bus. Every one
 * of these is over long before 30 days unless a service stays stopped for a month with such a
 * row, which the outbox's own 7-day retention of published rows already treats as lost
 * history. The horizon does not cover a durable consumer deleted by hand and recreated to
 * deliver its stream from the start: do not do that (README).
 */
export const DEFAULT_INBOX_RETENTION_MS = 30 * 24 * 60 * 60 * 1000;
const DEFAULT_INTERVAL_MS = 60 * 60 * 1000;
/** Rows deleted per statement: short statements that never hold consumers up for long. */
export const INBOX_PRUNE_BATCH = 1000;

/**
 * Deletes a service's inbox rows (the ids of processed messages) once they are past the
 * horizon in which the same message could be delivered again, in batches, hourly and at
 * start. Replicas may prune at once: each skips the rows another is deleting.
 */
export class InboxPruner {
  private readonly table: string;
  private readonly retentionMs: number;
  private readonly intervalMs: number;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<number> | undefined;
  private stopped = false;

  constructor(
    private readonly dataSource: DataSource,
    private readonly options: InboxPrunerOptions = {},
  ) {
    this.table = qualified(serviceSchemaOf(dataSource), 'inbox');
    this.retentionMs = options.retentionMs ?? DEFAULT_INBOX_RETENTION_MS;
    this.intervalMs = options.intervalMs ?? DEFAULT_INTERVAL_MS;
    if (!Number.isInteger(this.retentionMs) || this.retentionMs <= 0) throw new Error(`InboxPruner: retentionMs must be a positive integer, got ${this.retentionMs}`);
  }

  start(): void {
    this.timer = setInterval(() => void this.prune(), this.intervalMs);
    this.timer.unref();
    void this.prune();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    await this.running;
  }

  /** One round (or the one in progress): resolves with how many rows it deleted. */
  prune(now: Date = new Date()): Promise<number> {
    this.running ??= this.deleteOld(new Date(now.getTime() - this.retentionMs)).finally(() => (this.running = undefined));
    return this.running;
  }

  private async deleteOld(processedBefore: Date): Promise<number> {
    let total = 0;
    try {
      let deleted: number;
      do {
        const [row] = await this.dataSource.query<Array<{ deleted: number }>>(
          `WITH doomed AS (
             DELETE FROM ${this.table} WHERE (consumer, message_id) IN (
               SELECT consumer, message_id FROM ${this.table} WHERE processed_at < $1
                ORDER BY processed_at LIMIT $2 FOR UPDATE SKIP LOCKED)
             RETURNING 1)
           SELECT count(*)::int AS deleted FROM doomed`,
          [processedBefore, INBOX_PRUNE_BATCH],
        );
        deleted = row?.deleted ?? 0;
        total += deleted;
      } while (deleted === INBOX_PRUNE_BATCH && !this.stopped);
      if (total > 0) this.options.logger?.info({ table: this.table, deleted: total, processedBefore }, 'pruned old inbox rows');
    } catch (error) {
      this.options.logger?.warn({ table: this.table, error: errorMessage(error), deletedSoFar: total }, 'inbox pruning failed; the next round tries again');
    }
    return total;
  }
}
