import type { DataSource } from 'typeorm';
import type { Bus } from '@runline/bus';
import { claimUnpublished, markPublished, prunePublished, recordPublishFailure } from './outbox.repository.js';
import { consoleRelayLogger, errorMessage, type OutboxRelayLogger } from './relay-logger.js';
import { serviceSchemaOf } from './service-schema.js';

export interface OutboxRelayOptions {
  /** How often the relay looks for rows nobody woke it for (a crash between commit and publish, another process's commit, a failed publish). Default 1000 ms. */
  sweepIntervalMs?: number;
  /** Rows claimed (locked) and published per transaction. Default 100. */
  batchSize?: number;
  /** How long published rows are kept before they are pruned. Default 7 days. */
  retentionMs?: number;
  /** How often pruning runs. Default 10 minutes. */
  pruneIntervalMs?: number;
  /** Default: the console. */
  logger?: OutboxRelayLogger;
}

const DEFAULT_RETENTION_MS = 7 * 24 * 60 * 60 * 1000;
const PRUNE_BATCH = 1000;

/**
 * Publishes the rows of a service's outbox to the bus.
 *
 * - A transaction claims a batch of unpublished rows in sequence order (`FOR UPDATE SKIP
 *   LOCKED`), publishes them one after another with the row id as the bus dedupe key
 *   (`Nats-Msg-Id`), marks them published and commits. Replicas running a relay on the same
 *   table therefore never publish one row at the same time.
 * - `notify()` (called by `TransactionRunner` after each commit) publishes right away; a sweep
 *   every `sweepIntervalMs` is the backstop for rows nobody woke it for.
 * - A failed publish stops the batch (so later rows do not overtake it), counts an attempt on
 *   the row with the error, and leaves it for the next sweep; wake-ups are ignored until then,
 *   so a bus outage does not turn into a busy loop.
 * - A crash after publishing but before the commit republishes the row later with the same id;
 *   the stream drops it within its duplicate window, and consumer inboxes catch anything older.
 * - Order: rows are published in sequence order per batch, but transactions can commit out of
 *   sequence order and several relays publish disjoint batches in parallel, so consumers must
 *   not rely on a global order across messages.
 * - Retention: published rows are kept for `retentionMs` (default 7 days), for diagnosis
 *   ("was this event published, and when?"), then deleted in batches every `pruneIntervalMs`.
 *   Unpublished rows are never pruned.
 */
export class OutboxRelay {
  private readonly schema: string;
  private readonly sweepIntervalMs: number;
  private readonly batchSize: number;
  private readonly retentionMs: number;
  private readonly pruneIntervalMs: number;
  private readonly logger: OutboxRelayLogger;

  private running = false;
  private timer: NodeJS.Timeout | undefined;
  private draining: Promise<void> | undefined;
  private wakeAgain = false;
  /** Set by a failed publish; wake-ups wait for the next sweep. */
  private backingOff = false;
  private pruning: Promise<void> | undefined;
  private lastPruneAt = 0;

  constructor(
    private readonly dataSource: DataSource,
    private readonly bus: Pick<Bus, 'publish'>,
    options: OutboxRelayOptions = {},
  ) {
    this.schema = serviceSchemaOf(dataSource);
    this.sweepIntervalMs = positiveInteger('sweepIntervalMs', options.sweepIntervalMs ?? 1000);
    this.batchSize = positiveInteger('batchSize', options.batchSize ?? 100);
    this.retentionMs = positiveInteger('retentionMs', options.retentionMs ?? DEFAULT_RETENTION_MS);
    this.pruneIntervalMs = positiveInteger('pruneIntervalMs', options.pruneIntervalMs ?? 10 * 60 * 1000);
    this.logger = options.logger ?? consoleRelayLogger;
  }

  /** Starts sweeping and publishes whatever is pending now. Idempotent. */
  start(): void {
    if (this.running) return;
    this.running = true;
    this.backingOff = false;
    this.timer = setInterval(() => this.sweep(), this.sweepIntervalMs);
    // The relay serves the process; it is no reason for the process to stay alive.
    this.timer.unref();
    this.sweep();
  }

  /** Publishes pending rows now (soon after, if a pass is running). No-op unless started. */
  notify(): void {
    if (!this.running || this.backingOff) return;
    if (this.draining) {
      this.wakeAgain = true;
      return;
    }
    this.draining = this.drain().finally(() => {
      this.draining = undefined;
      if (this.wakeAgain) this.notify();
    });
  }

  /**
   * Stops sweeping, waits for the pass in progress, then publishes what is still pending once
   * more (so messages committed just before shutdown leave now). Rows it cannot publish stay
   * for the next relay to start.
   */
  async stop(): Promise<void> {
    if (!this.running) return;
    this.running = false;
    clearInterval(this.timer);
    this.timer = undefined;
    await this.draining;
    await this.pruning;
    await this.publishPending(() => true);
  }

  private sweep(): void {
    this.backingOff = false;
    this.notify();
    if (!this.pruning && Date.now() - this.lastPruneAt >= this.pruneIntervalMs) {
      this.lastPruneAt = Date.now();
      this.pruning = this.prune().finally(() => {
        this.pruning = undefined;
      });
    }
  }

  private async drain(): Promise<void> {
    do {
      this.wakeAgain = false;
      const ok = await this.publishPending(() => this.running);
      if (!ok) {
        this.backingOff = true;
        this.wakeAgain = false;
        return;
      }
    } while (this.wakeAgain && this.running);
  }

  /** Publishes batches until one comes back short; false if a publish or the database failed. */
  private async publishPending(keepGoing: () => boolean): Promise<boolean> {
    for (;;) {
      const { claimed, failed } = await this.publishBatch();
      if (failed) return false;
      if (claimed < this.batchSize || !keepGoing()) return true;
    }
  }

  private async publishBatch(): Promise<{ claimed: number; failed: boolean }> {
    try {
      return await this.dataSource.transaction(async (manager) => {
        const rows = await claimUnpublished(manager, this.schema, this.batchSize);
        const published: string[] = [];
        let failed = false;
        for (const row of rows) {
          try {
            await this.bus.publish({ id: row.id, subject: row.subject, data: row.data, headers: row.headers });
            published.push(row.id);
          } catch (error) {
            failed = true;
            const message = errorMessage(error);
            await recordPublishFailure(manager, this.schema, row.id, message);
            this.logger.warn(
              { schema: this.schema, messageId: row.id, subject: row.subject, error: message },
              'outbox publish failed; the message stays in the outbox for the next sweep',
            );
            break;
          }
        }
        await markPublished(manager, this.schema, published);
        return { claimed: rows.length, failed };
      });
    } catch (error) {
      this.logger.error({ schema: this.schema, error: errorMessage(error) }, 'outbox relay could not claim or mark messages');
      return { claimed: 0, failed: true };
    }
  }

  private async prune(): Promise<void> {
    try {
      while ((await prunePublished(this.dataSource.manager, this.schema, this.retentionMs, PRUNE_BATCH)) === PRUNE_BATCH) {
        if (!this.running) return;
      }
    } catch (error) {
      this.logger.warn({ schema: this.schema, error: errorMessage(error) }, 'outbox pruning failed; it is retried later');
    }
  }
}

function positiveInteger(name: string, value: number): number {
  if (!Number.isInteger(value) || value <= 0) throw new Error(`OutboxRelay: ${name} must be a positive integer, got ${value}`);
  return value;
}
