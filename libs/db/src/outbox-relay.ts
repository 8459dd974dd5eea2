import { context, ROOT_CONTEXT } from '@opentelemetry/api';
import type { DataSource } from 'typeorm';
import type { Bus, BusMessage } from '@runline/bus';
import { claimUnpublished, markPublished, prunePublished, recordPublishFailure } from './outbox.repository.js';
import type { OutboxMetrics } from './outbox-metrics.js';
import { consoleRelayLogger, errorMessage, type OutboxRelayLogger } from './relay-logger.js';
import { serviceSchemaOf } from './service-schema.js';

export interface OutboxRelayOptions {
  /** How often the relay looks for rows nobody woke it for (a crash between commit and publish, another process's commit, a failed publish). Default 1000 ms. */
  sweepIntervalMs?: number;
  /**
   * How old an unpublished row must be before a periodic sweep takes it: younger rows are being
   * published directly by the process that committed them. A row whose publish failed is taken
   * at once. Default 2000 ms.
   */
  sweepAgeMs?: number;
  /** Committed messages held in memory for direct publishing; beyond this, the sweep takes them. Default 10 000. */
  maxDirect?: number;
  /** How long direct publishes are gathered before one UPDATE marks them published. Default 20 ms. */
  markDelayMs?: number;
  /** Rows claimed (locked) and published per transaction. Default 100. */
  batchSize?: number;
  /** How long published rows are kept before they are pruned. Default 7 days. */
  retentionMs?: number;
  /** How often pruning runs. Default 10 minutes. */
  pruneIntervalMs?: number;
  /** Default: the console. */
  logger?: OutboxRelayLogger;
  /** Default: none. */
  metrics?: OutboxMetrics;
}

const DEFAULT_RETENTION_MS = 7 * 24 * 60 * 60 * 1000;
const PRUNE_BATCH = 1000;

/**
 * Publishes the rows of a service's outbox to the bus.
 *
 * - Directly after a commit (`notify(messages)`, called by `TransactionRunner`): the messages
 *   the commit wrote are in memory, so they are published from there, in commit order, without
 *   reading the outbox, and then marked published in bulk (one UPDATE for every message that
 *   went out meanwhile). This is the hot path: no transaction, no row locks.
 * - A transaction claims a batch of unpublished rows in sequence order (`FOR UPDATE SKIP
 *   LOCKED`), publishes them one after another with the row id as the bus dedupe key
 *   (`Nats-Msg-Id`), marks them published and commits. Replicas running a relay on the same
 *   table therefore never publish one row at the same time.
 * - A sweep every `sweepIntervalMs` is the backstop for rows nobody published directly (a crash
 *   between commit and publish, a failed publish, another process's commit): it takes rows
 *   older than `sweepAgeMs`, so it does not race the process publishing them directly. At start,
 *   after a failed direct publish and at stop, the relay takes every unpublished row.
 * - A row published directly and also taken by a sweep (its marking was slow, or it was
 *   committed just before another replica started) goes out twice with the same id: the
 *   stream drops the second within its duplicate window.
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
  private readonly metrics: OutboxMetrics | undefined;

  private running = false;
  private timer: NodeJS.Timeout | undefined;
  private draining: Promise<void> | undefined;
  private wakeAgain = false;
  /** Set by a failed publish; wake-ups wait for the next sweep. */
  private backingOff = false;
  private pruning: Promise<void> | undefined;
  private lastPruneAt = 0;
  private readonly sweepAgeMs: number;
  private readonly maxDirect: number;
  /** Committed messages waiting for a direct publish, in commit order. */
  private direct: BusMessage[] = [];
  private publishingDirect: Promise<void> | undefined;
  /** Ids being published or marked directly; sweeps of this process skip them. */
  private readonly inFlight = new Set<string>();
  private toMark: string[] = [];
  private marking: Promise<void> | undefined;
  private markTimer: NodeJS.Timeout | undefined;
  private readonly markDelayMs: number;
  /** The next claim takes fresh rows too (start, a failed direct publish). */
  private claimFresh = true;

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
    this.sweepAgeMs = positiveInteger('sweepAgeMs', options.sweepAgeMs ?? 2000);
    this.maxDirect = positiveInteger('maxDirect', options.maxDirect ?? 10_000);
    this.markDelayMs = positiveInteger('markDelayMs', options.markDelayMs ?? 20);
    this.logger = options.logger ?? consoleRelayLogger;
    this.metrics = options.metrics;
  }

  /** Starts sweeping and publishes whatever is pending now. Idempotent. */
  start(): void {
    if (this.running) return;
    this.running = true;
    this.backingOff = false;
    this.claimFresh = true;
    this.timer = setInterval(() => this.sweep(), this.sweepIntervalMs);
    // The relay serves the process; it is no reason for the process to stay alive.
    this.timer.unref();
    this.sweep();
  }

  /**
   * After a commit: publishes `committed` (what it wrote to the outbox, in order) directly, or
   * without them, claims and publishes pending rows now (soon after, if a pass is running).
   * No-op unless started.
   */
  notify(committed?: readonly BusMessage[]): void {
    if (committed) this.metrics?.committed(committed);
    if (!this.running || this.backingOff) return;
    if (committed) {
      this.publishDirect(committed);
      return;
    }
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
    while (this.publishingDirect || this.marking || this.markTimer) {
      await this.publishingDirect;
      clearTimeout(this.markTimer);
      this.markTimer = undefined;
      if (this.toMark.length > 0) this.startMarking();
      await this.marking;
    }
    await this.publishPending(() => true, 0);
  }

  private publishDirect(committed: readonly BusMessage[]): void {
    // Far behind (the bus is slow): leave these to the sweep rather than grow without bound.
    if (this.direct.length + committed.length > this.maxDirect) return;
    for (const message of committed) {
      this.direct.push(message);
      this.inFlight.add(message.id);
    }
    // Started on the next turn of the event loop, so the committing code goes on first (a sync
    // run's reply should not wait for its events to be handed to the bus).
    this.publishingDirect ??= new Promise<void>((resolve) => setImmediate(resolve))
      .then(() => this.drainDirect())
      .finally(() => {
        this.publishingDirect = undefined;
      });
  }

  /**
   * Publishes the queued messages, every message of a round at once (the bus keeps their order
   * on its connection), and marks the ones before the first failure. After a failure the rest
   * are left to a claim pass, which publishes them in sequence order and records the error.
   */
  /**
   * A row's trace is the one in its headers (the envelope's `traceparent`, stamped when it was
   * written), never the context of whichever commit woke the relay: that would put rows of
   * other transactions into its trace.
   */
  private publish(message: BusMessage): Promise<void> {
    return context.with(ROOT_CONTEXT, () => this.bus.publish(message));
  }

  private async drainDirect(): Promise<void> {
    while (this.direct.length > 0) {
      const round = this.direct;
      this.direct = [];
      const outcomes = await Promise.allSettled(round.map((message) => this.publish(message)));
      const failedAt = outcomes.findIndex((outcome) => outcome.status === 'rejected');
      const sent = failedAt === -1 ? round : round.slice(0, failedAt);
      this.queueMark(sent.map((message) => message.id));
      if (failedAt !== -1) {
        const unsent = [...round.slice(failedAt), ...this.direct];
        this.direct = [];
        for (const message of unsent) this.inFlight.delete(message.id);
        this.claimFresh = true;
        this.notify();
        return;
      }
    }
  }

  /** Marks are gathered for `markDelayMs`, so one UPDATE covers the messages of many commits. */
  private queueMark(ids: string[]): void {
    this.toMark.push(...ids);
    if (this.toMark.length === 0 || this.marking || this.markTimer) return;
    this.markTimer = setTimeout(() => {
      this.markTimer = undefined;
      this.startMarking();
    }, this.markDelayMs);
  }

  private startMarking(): void {
    this.marking ??= this.markQueued().finally(() => {
      this.marking = undefined;
      this.queueMark([]);
    });
  }

  private async markQueued(): Promise<void> {
    while (this.toMark.length > 0) {
      const ids = this.toMark;
      this.toMark = [];
      try {
        await markPublished(this.dataSource.manager, this.schema, ids);
      } catch (error) {
        // Published but not marked: a later sweep publishes them again, and the stream drops the copies.
        this.logger.warn({ schema: this.schema, messages: ids.length, error: errorMessage(error) }, 'outbox could not mark published messages');
      } finally {
        for (const id of ids) this.inFlight.delete(id);
      }
    }
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
      const minAgeMs = this.claimFresh ? 0 : this.sweepAgeMs;
      this.claimFresh = false;
      const ok = await this.publishPending(() => this.running, minAgeMs);
      if (!ok) {
        this.backingOff = true;
        this.wakeAgain = false;
        return;
      }
    } while (this.wakeAgain && this.running);
  }

  /** Publishes batches until one comes back short; false if a publish or the database failed. */
  private async publishPending(keepGoing: () => boolean, minAgeMs: number): Promise<boolean> {
    for (;;) {
      const { claimed, failed } = await this.publishBatch(minAgeMs);
      if (failed) return false;
      if (claimed < this.batchSize || !keepGoing()) return true;
    }
  }

  private async publishBatch(minAgeMs: number): Promise<{ claimed: number; failed: boolean }> {
    try {
      return await this.dataSource.transaction(async (manager) => {
        const rows = await claimUnpublished(manager, this.schema, this.batchSize, { minAgeMs, skip: [...this.inFlight] });
        const published: string[] = [];
        let failed = false;
        for (const row of rows) {
          try {
            await this.publish({ id: row.id, subject: row.subject, data: row.data, headers: row.headers });
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
