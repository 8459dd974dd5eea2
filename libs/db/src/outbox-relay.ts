import { context, ROOT_CONTEXT } from '@opentelemetry/api';
import type { DataSource } from 'typeorm';
import type { Bus, BusMessage } from '@runline/bus';
import { claimUnpublished, markPublished, prunePublished, recordPublishFailure, type OutboxRow } from './outbox.repository.js';
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
  /**
   * The order group of a subject: rows of one group are published in sequence order, and a
   * failed publish holds back only its group's later rows. Default `streamOfSubject` (a
   * subject's `<domain>.<kind>`, which is what one stream captures).
   */
  orderGroupOf?: (subject: string) => string;
}

/**
 * The stream a subject goes to, as far as order goes: its first two tokens (`<domain>.<kind>`,
 * see the subject rules in `@runline/contracts`), e.g. `invocation.evt` for
 * `invocation.evt.invocation-queued`.
 */
export function streamOfSubject(subject: string): string {
  const first = subject.indexOf('.');
  const second = first === -1 ? -1 : subject.indexOf('.', first + 1);
  return second === -1 ? subject : subject.slice(0, second);
}

const DEFAULT_RETENTION_MS = 7 * 24 * 60 * 60 * 1000;

/** What one claim pass learned: streams whose publish failed, and the rows it held back. */
interface PassState {
  failedGroups: Set<string>;
  heldBack: string[];
}
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
 * - Order is kept per stream (`orderGroupOf`, by default the subject's `<domain>.<kind>`): a
 *   batch publishes each stream's rows one after another, in sequence order, and the streams
 *   side by side. A failed publish counts an attempt on the row with the error and holds back
 *   the later rows of its stream only (so they do not overtake it), for the rest of the pass;
 *   the other streams' rows go on (one stream without a leader, during an election, does not
 *   stop the others). The held rows wait for the next sweep; until a pass publishes that
 *   stream's backlog, its newly committed messages are not published directly either (they
 *   would overtake it), and wake-ups wait for the sweep, so a bus outage does not turn into a
 *   busy loop.
 * - A crash after publishing but before the commit republishes the row later with the same id;
 *   the stream drops it within its duplicate window, and consumer inboxes catch anything older.
 * - Order: rows of a stream are published in sequence order per batch, but transactions can
 *   commit out of sequence order and several relays publish disjoint batches in parallel, so
 *   consumers must not rely on a global order across messages, nor across streams.
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
  /** The next claim takes fresh rows too (start, a failed publish). */
  private claimFresh = true;
  private readonly orderGroupOf: (subject: string) => string;
  /**
   * Order groups with an unpublished row whose publish failed (set by the failure, replaced by
   * each claim pass): their new messages go to the claim passes, not out directly.
   */
  private blocked = new Set<string>();

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
    this.orderGroupOf = options.orderGroupOf ?? streamOfSubject;
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
    if (!this.running) return;
    if (committed) {
      // A stream whose publish failed keeps its order through the claim passes: its messages
      // wait there (the next sweep takes them, fresh or not); the others go out now.
      const free = this.blocked.size === 0 ? committed : committed.filter((message) => !this.blocked.has(this.orderGroupOf(message.subject)));
      if (free.length < committed.length) this.claimFresh = true;
      if (free.length > 0) this.publishDirect(free);
      return;
    }
    if (this.backingOff) return;
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
      const round = this.direct.filter((message) => !this.blocked.has(this.orderGroupOf(message.subject)));
      // Messages of a stream that failed meanwhile: left to the claim passes.
      for (const message of this.direct) if (!round.includes(message)) this.inFlight.delete(message.id);
      this.direct = [];
      const outcomes = await Promise.allSettled(round.map((message) => this.publish(message)));
      // A stream's messages from its first failure on are left to a claim pass, which
      // publishes them in sequence order and records the error; other streams' are marked.
      const failedGroups = new Set<string>();
      const sent: string[] = [];
      round.forEach((message, index) => {
        const group = this.orderGroupOf(message.subject);
        if (outcomes[index]!.status === 'rejected') failedGroups.add(group);
        if (failedGroups.has(group)) this.inFlight.delete(message.id);
        else sent.push(message.id);
      });
      this.queueMark(sent);
      if (failedGroups.size > 0) {
        for (const group of failedGroups) this.blocked.add(group);
        this.claimFresh = true;
        this.notify();
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
        // What the streams held back commit meanwhile waits for the sweep: take it then, fresh.
        this.claimFresh = true;
        this.wakeAgain = false;
        return;
      }
    } while (this.wakeAgain && this.running);
  }

  /**
   * Publishes batches until one comes back short; false if a publish or the database failed.
   * A stream whose publish failed is skipped for the rest of the pass (its rows stay, in order,
   * for the next one); the other streams go on.
   */
  private async publishPending(keepGoing: () => boolean, minAgeMs: number): Promise<boolean> {
    const pass: PassState = { failedGroups: new Set(), heldBack: [] };
    let ok = true;
    for (;;) {
      const { claimed, failed } = await this.publishBatch(minAgeMs, pass);
      if (failed === 'database') {
        ok = false;
        break;
      }
      if (failed === 'publish') ok = false;
      if (claimed < this.batchSize || !keepGoing()) break;
    }
    this.blocked = pass.failedGroups;
    return ok;
  }

  private async publishBatch(minAgeMs: number, pass: PassState): Promise<{ claimed: number; failed: false | 'publish' | 'database' }> {
    try {
      return await this.dataSource.transaction(async (manager) => {
        const rows = await claimUnpublished(manager, this.schema, this.batchSize, { minAgeMs, skip: [...this.inFlight, ...pass.heldBack] });
        const byGroup = new Map<string, OutboxRow[]>();
        for (const row of rows) {
          const group = this.orderGroupOf(row.subject);
          const groupRows = byGroup.get(group);
          if (groupRows) groupRows.push(row);
          else byGroup.set(group, [row]);
        }
        const published: string[] = [];
        const failures: Array<{ row: OutboxRow; error: string }> = [];
        // Each stream's rows one after another, in sequence order; the streams side by side.
        await Promise.all(
          [...byGroup].map(async ([group, groupRows]) => {
            for (const row of groupRows) {
              if (pass.failedGroups.has(group)) {
                pass.heldBack.push(row.id);
                continue;
              }
              try {
                await this.publish({ id: row.id, subject: row.subject, data: row.data, headers: row.headers });
                published.push(row.id);
              } catch (error) {
                pass.failedGroups.add(group);
                pass.heldBack.push(row.id);
                failures.push({ row, error: errorMessage(error) });
              }
            }
          }),
        );
        for (const { row, error } of failures) {
          await recordPublishFailure(manager, this.schema, row.id, error);
          this.logger.warn(
            { schema: this.schema, messageId: row.id, subject: row.subject, error },
            "outbox publish failed; the message and its stream's later ones stay in the outbox for the next sweep",
          );
        }
        await markPublished(manager, this.schema, published);
        return { claimed: rows.length, failed: failures.length > 0 ? 'publish' : false };
      });
    } catch (error) {
      this.logger.error({ schema: this.schema, error: errorMessage(error) }, 'outbox relay could not claim or mark messages');
      return { claimed: 0, failed: 'database' };
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
