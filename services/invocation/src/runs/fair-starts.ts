import { Inject, Injectable, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { GroupCommit, TransactionRunner } from '@runline/db';
import type { Logger } from '@runline/observability';
import { LOGGER, METRICS_REGISTRY } from '@runline/runtime';
import { Gauge, type Registry } from 'prom-client';
import { InvocationConfig } from '../config.js';
import type { Expectation } from '../lifecycle/run-lifecycle.js';
import { RunStarter } from './run-starter.js';
import { forgetStarts, pickStarts, queuedStartCount, queueStarts, type QueuedStart } from './start-queue.repository.js';

/** Starts already waiting here for a run slot before the next arrivals queue in PostgreSQL instead. */
export const QUEUE_AFTER_WAITING_STARTS = 4;
/**
 * Queued runs taken beyond the free slots, to wait here for the next ones: one statement takes
 * several runs instead of one per freed slot. A run of another project queued meanwhile waits
 * behind at most these few.
 */
export const TAKEN_AHEAD = 4;
/** How often every replica with a free run slot looks for queued runs (queued by another replica, or picked by one that died). */
const POLL_MS = 100;

const QUEUED_RUN: Expectation = { status: 'QUEUED', dispatched: true };
const nothingToAcknowledge = () => Promise.resolve();

/**
 * Fairness between projects (DESIGN section 13): one project's backlog must not delay another
 * project's runs.
 *
 * Where a backlog waits: a QUEUED run's RunInvocation command waits on the INVOCATION_COMMANDS
 * work queue, first in, first out, and each replica takes commands only while it has run slots
 * for them (RunInvocationHandler). 20,000 runs of project A accepted at once are 20,000
 * commands ahead of project B's next one: B's runs waited for A's whole backlog.
 *
 * The fair order, decided here and only here (`shouldQueue`): while a replica's run slots are
 * free and nothing is queued, a run starts as its command arrives, as before (no statement
 * more: the common path without a backlog is unchanged). Once QUEUE_AFTER_WAITING_STARTS
 * starts wait here for a slot, or runs are queued already, arriving
 * runs are queued in PostgreSQL (`start_queue`, start-queue.repository.ts: the backlog may be
 * millions, and it outlives any replica) and their commands acknowledged, so the work queue
 * empties into it at once. Freed run slots, on any replica, take the next runs in the fair
 * order (TAKEN_AHEAD more, to wait here for the next slots): start-time fair queuing by project (deficit round robin with a quantum of one run),
 * numbered under a lock per project, taken with SKIP LOCKED, so the order holds across
 * replicas. B's run is numbered right after the run that starts next, whatever A has queued.
 * A taken run is marked picked for RUN_LEASE_MS and forgotten once its start was decided; a
 * replica killed in between leaves it to be taken again, never lost and never started twice
 * (the start's claim applies only to a run still QUEUED).
 *
 * FAIR_START_ORDER=off turns this off (first in, first out), for comparison only.
 */
@Injectable()
export class FairStarts implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly enabled: boolean;
  private readonly leaseMs: number;
  /** This replica queued runs, or took some from the queue: arrivals queue behind them until it is found empty. */
  private queueInUse = false;
  private readonly queueing: GroupCommit<QueuedStart, undefined>;
  private readonly forgetting: GroupCommit<string, undefined>;
  private timer: NodeJS.Timeout | undefined;
  private pumping: Promise<void> | null = null;
  private again = false;
  private stopped = false;

  constructor(
    private readonly transactions: TransactionRunner,
    private readonly starter: RunStarter,
    @Inject(InvocationConfig) config: InvocationConfig,
    @Inject(LOGGER) private readonly logger: Logger,
    @Inject(METRICS_REGISTRY) registry: Registry,
  ) {
    this.enabled = config.FAIR_START_ORDER === 'on';
    this.leaseMs = config.RUN_LEASE_MS;
    this.queueing = new GroupCommit(async (starts) => {
      await queueStarts(transactions, starts);
      return starts.map(() => undefined);
    }, 2);
    this.forgetting = new GroupCommit(async (ids) => {
      await forgetStarts(transactions.dataSource.manager, ids);
      return ids.map(() => undefined);
    }, 1);
    const manager = transactions.dataSource.manager;
    new Gauge({
      name: 'runline_invocation_start_queue',
      help: 'Queued runs waiting in the fair start queue for a run slot of any replica (every project together).',
      registers: [registry],
      async collect() {
        this.set(await queuedStartCount(manager));
      },
    });
  }

  onApplicationBootstrap(): void {
    if (!this.enabled) return;
    this.starter.onSlotFreed(() => {
      if (this.queueInUse) this.pump();
    });
    this.schedule();
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.pumping;
  }

  /** Whether a run arriving now queues in the fair order rather than starting as it comes. */
  shouldQueue(): boolean {
    return this.enabled && (this.queueInUse || this.starter.startsWaitingForSlot >= QUEUE_AFTER_WAITING_STARTS);
  }

  /** Queues a QUEUED run in the fair order; resolves once it is written (then its command may be acknowledged). */
  async queue(invocationId: string, projectId: string): Promise<void> {
    await this.queueing.submit({ invocationId, projectId });
    this.queueInUse = true;
    this.pump();
  }

  /** Takes queued runs for the free run slots (now, or right after the take under way). */
  private pump(): void {
    if (this.stopped) return;
    if (this.pumping) {
      this.again = true;
      return;
    }
    this.pumping = this.takeForFreeSlots()
      .catch((error: unknown) => this.logger.warn({ err: error }, 'could not take runs from the start queue; trying again shortly'))
      .finally(() => {
        this.pumping = null;
        if (this.again) {
          this.again = false;
          this.pump();
        }
      });
  }

  private async takeForFreeSlots(): Promise<void> {
    for (let free = this.starter.freeSlots; free > 0 && !this.stopped; free = this.starter.freeSlots) {
      const taken = await pickStarts(this.transactions.dataSource.manager, free + TAKEN_AHEAD, this.leaseMs);
      if (taken.length === 0) {
        this.queueInUse = false;
        return;
      }
      this.queueInUse = true;
      // Each start takes a free run slot before it returns (a run due now), so the loop sees them
      // taken; the ones taken ahead wait here for the next slots, first in, first out.
      for (const run of taken) this.start(run.invocationId);
    }
  }

  private start(invocationId: string): void {
    this.starter
      .start(invocationId, QUEUED_RUN, nothingToAcknowledge)
      .then(
        () => this.forgetting.submit(invocationId).catch((error: unknown) => this.logger.warn({ err: error, invocationId }, 'a started run stays in the start queue; it is dropped when taken again')),
        (error: unknown) => this.logger.warn({ err: error, invocationId }, 'a queued run could not be started; it is taken again after its pick lapses'),
      );
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      if (this.starter.freeSlots > 0) this.pump();
      this.schedule();
    }, POLL_MS);
    this.timer.unref();
  }
}
