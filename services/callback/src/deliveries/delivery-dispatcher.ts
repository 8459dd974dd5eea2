import { Inject, Injectable, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { GroupCommit, TransactionRunner } from '@runline/db';
import type { Logger } from '@runline/observability';
import { OutboundGuard } from '@runline/outbound';
import { LOGGER, METRICS_REGISTRY, SecretBox } from '@runline/runtime';
import { CallbackConfig } from '../config.js';
import { callbackAttemptedMessage } from './callback-messages.js';
import { attemptDelivery } from './delivery-attempt.js';
import { ACK_WINDOW_MS, afterAttempt } from './delivery-rules.js';
import {
  claimDelivery,
  claimDueDeliveries,
  releaseDeliveries,
  renewClaims,
  dueSoon,
  insertDeliveries,
  recordAttempts,
  type AttemptRecord,
  type ClaimedDelivery,
  type NewDelivery,
} from './callback-deliveries.repository.js';

const SWEEP_BATCH = 500;
/**
 * An attempt starts only while its lease has the acknowledgement window and this much left,
 * so its record lands before another replica may take the delivery (CALLBACK_LEASE_MS is at
 * least the window and a second).
 */
const START_MARGIN_MS = 500;

/** A delivery this replica holds, until its lease ends (epoch ms). */
type HeldDelivery = ClaimedDelivery & { leaseUntil: number };

/** `accept` after shutdown began: the command is for another replica (nak it at once). */
export class DispatcherStoppedError extends Error {
  constructor() {
    super('the callback dispatcher is shutting down');
  }
}

/**
 * Delivers callbacks. The table is the truth; this process keeps timers only.
 *
 * - A new delivery is inserted already claimed by this replica (group-committed with others
 *   arriving at the same time) and its first attempt starts right after the commit.
 * - After a failed attempt the delivery is PENDING with its next attempt time persisted (the
 *   delivery rules give the wait), and a timer of this replica claims it then.
 * - A sweep every CALLBACK_SWEEP_INTERVAL_MS claims due deliveries nobody holds (a replica that
 *   died between or during attempts, after its lease) and sets timers for the ones due before
 *   the next sweep. It runs first at start, so a restart resumes at once.
 * - Each attempt's record, the delivery's next state and its CallbackAttempted event commit in
 *   one transaction (group-committed too).
 *
 * Once across replicas: a claim holds a delivery for CALLBACK_LEASE_MS, after which any replica
 * may claim it again. So a sweep claims no more than this replica has free slots for (what it
 * cannot start now stays for the others), and a delivery that waited for a slot here (new ones
 * arrive claimed; a retry's timer claims without asking) starts only while its lease still
 * covers a whole attempt; otherwise its claim is renewed first, and kept only if no other
 * replica claimed it after the lease ran out (then that claim alone attempts it). Without that, a
 * backlog longer than a lease was attempted twice: once by the replica that claimed it long ago
 * and once by the one that claimed it after the lease ran out.
 *
 * Attempts to one receiver are at most CALLBACK_CONNECTIONS_PER_RECEIVER at once (the outbound
 * pool's connections to it): a delivery waits here for one, so its acknowledgement window starts
 * when its request goes out, not while it queues for a connection.
 *
 * Shutdown takes no new work (`accept` refuses, so the command is nak'ed for another replica),
 * and gives back every claim it will not attempt (waiting for a slot, inserted or claimed while
 * stopping): their lease is cleared, so another replica's sweep attempts them at once instead of
 * after the lease. Attempts in flight finish and are recorded.
 */
@Injectable()
export class DeliveryDispatcher implements OnApplicationBootstrap, OnApplicationShutdown {
  private state: 'new' | 'running' | 'stopped' = 'new';
  private sweepTimer: NodeJS.Timeout | undefined;
  private sweeping: Promise<void> | undefined;
  /** The last sweep claimed all it could take: more may be due, so freed slots sweep again before the interval. */
  private backlog = false;
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private readonly inFlight = new Set<Promise<void>>();
  /** Accepts, timer claims and give-backs in progress: shutdown waits for them. */
  private readonly background = new Set<Promise<unknown>>();
  private readonly waiting: HeldDelivery[] = [];
  private active = 0;
  /** Attempts in flight to each receiver, and the claimed deliveries waiting for one of its connections. */
  private readonly receivers = new Map<string, { active: number; waiting: HeldDelivery[] }>();
  private waitingForReceivers = 0;
  private readonly inserts: GroupCommit<NewDelivery, number | null>;
  private readonly records: GroupCommit<{ delivery: ClaimedDelivery; record: AttemptRecord }, boolean>;
  private readonly renewals: GroupCommit<HeldDelivery, number | null>;
  private readonly attemptsTotal: Counter<'outcome'>;
  private readonly deliveriesTotal: Counter<'result'>;
  private readonly attemptSeconds: Histogram;
  private readonly retryLateness: Histogram;
  private readonly inFlightGauge: Gauge;

  constructor(
    private readonly transactions: TransactionRunner,
    @Inject(OutboundGuard) private readonly guard: OutboundGuard,
    @Inject(SecretBox) private readonly secrets: SecretBox,
    @Inject(CallbackConfig) private readonly config: CallbackConfig,
    @Inject(LOGGER) private readonly logger: Logger,
    @Inject(METRICS_REGISTRY) registry: Registry,
  ) {
    this.inserts = new GroupCommit((items) => this.insertBatch(items));
    this.records = new GroupCommit((items) => this.recordBatch(items));
    this.renewals = new GroupCommit((items) => this.renewBatch(items));
    this.attemptsTotal = new Counter({
      name: 'runline_callback_attempts_total',
      help: 'Callback delivery attempts recorded, by outcome.',
      labelNames: ['outcome'],
      registers: [registry],
    });
    this.deliveriesTotal = new Counter({
      name: 'runline_callback_deliveries_total',
      help: 'Callback deliveries ended: delivered (acknowledged) or failed (every attempt failed).',
      labelNames: ['result'],
      registers: [registry],
    });
    this.attemptSeconds = new Histogram({
      name: 'runline_callback_attempt_duration_seconds',
      help: 'Duration of one delivery attempt, from the DNS check to the last byte of the answer.',
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [registry],
    });
    this.retryLateness = new Histogram({
      name: 'runline_callback_retry_lateness_seconds',
      help: 'How long after its due time a retry attempt started.',
      buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1, 5],
      registers: [registry],
    });
    this.inFlightGauge = new Gauge({
      name: 'runline_callback_attempts_in_flight',
      help: 'Attempts this replica is making right now.',
      registers: [registry],
      collect: () => undefined,
    });
  }

  onApplicationBootstrap(): void {
    this.state = 'running';
    this.sweepTimer = setInterval(() => this.sweep(), this.config.CALLBACK_SWEEP_INTERVAL_MS);
    this.sweepTimer.unref();
    this.sweep();
  }

  /** Whether new deliveries are taken (false once shutdown began). */
  get accepting(): boolean {
    return this.state === 'running';
  }

  /**
   * Takes no new work, gives back what it claimed but will not attempt, waits for the attempts
   * in flight to be recorded, closes idle connections.
   */
  async onApplicationShutdown(): Promise<void> {
    if (this.state === 'stopped') return;
    this.state = 'stopped';
    clearInterval(this.sweepTimer);
    for (const timer of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
    this.giveBack(this.waiting.splice(0));
    for (const receiver of this.receivers.values()) this.giveBack(receiver.waiting.splice(0));
    this.waitingForReceivers = 0;
    await this.sweeping;
    // Accepts and claims that commit from now on give their delivery back (see `start`).
    while (this.background.size > 0) await Promise.allSettled([...this.background]);
    await Promise.allSettled([...this.inFlight]);
    this.guard.close();
  }

  /**
   * Records a new delivery and starts its first attempt; resolves once it is committed. Refused
   * (`DispatcherStoppedError`) once shutdown began, so the command goes to another replica.
   */
  async accept(delivery: NewDelivery): Promise<void> {
    if (this.state !== 'running') throw new DispatcherStoppedError();
    await this.track(
      this.inserts.submit(delivery).then((leaseUntil) => {
        if (leaseUntil !== null) this.start({ ...delivery, attemptsMade: 0, leaseUntil });
      }),
    );
  }

  private track<T>(work: Promise<T>): Promise<T> {
    this.background.add(work);
    void work.then(
      () => this.background.delete(work),
      () => this.background.delete(work),
    );
    return work;
  }

  /**
   * Clears the lease of deliveries this replica claimed but will not attempt (it is stopping),
   * so another replica's sweep takes them now rather than after the lease.
   */
  private giveBack(deliveries: HeldDelivery[]): void {
    if (deliveries.length === 0) return;
    const released = this.transactions
      .run((tx) => releaseDeliveries(tx.manager, deliveries.map((delivery) => ({ id: delivery.id, attemptsMade: delivery.attemptsMade, leaseUntil: new Date(delivery.leaseUntil) }))))
      .then(
        (count) => this.logger.info({ count }, 'callback deliveries given back at shutdown'),
        (error: unknown) => this.logger.warn({ err: error, count: deliveries.length }, 'could not give back claimed callbacks; they are taken up after their lease'),
      );
    void this.track(released);
  }

  /** Inserts the batch claimed by this replica; each item's lease end, or null when it was not inserted. */
  private async insertBatch(items: NewDelivery[]): Promise<Array<number | null>> {
    const now = new Date();
    const leaseUntil = this.leaseFrom(now);
    const inserted = await this.transactions.run((tx) => insertDeliveries(tx.manager, items, now, leaseUntil));
    // Two commands for one id in a batch: only the first starts an attempt.
    const started = new Set<string>();
    return items.map((item) => {
      const first = inserted.has(item.id) && !started.has(item.id);
      started.add(item.id);
      return first ? leaseUntil.getTime() : null;
    });
  }

  private leaseFrom(now: Date): Date {
    return new Date(now.getTime() + this.config.CALLBACK_LEASE_MS);
  }

  /** Slots free for attempts claimed now: neither in flight nor promised to a waiting delivery. */
  private freeSlots(): number {
    return Math.max(0, this.config.CALLBACK_CONCURRENCY - this.active - this.waiting.length - this.waitingForReceivers);
  }

  private receiverOf(delivery: HeldDelivery): { active: number; waiting: HeldDelivery[] } {
    const key = receiverKey(delivery.url);
    let receiver = this.receivers.get(key);
    if (!receiver) this.receivers.set(key, (receiver = { active: 0, waiting: [] }));
    return receiver;
  }

  /** Runs an attempt of a claimed delivery now, or as soon as a slot is free. */
  private start(delivery: HeldDelivery): void {
    if (this.state !== 'running') {
      this.giveBack([delivery]);
      return;
    }
    if (this.active >= this.config.CALLBACK_CONCURRENCY) {
      this.waiting.push(delivery);
      return;
    }
    const receiver = this.receiverOf(delivery);
    if (receiver.active >= this.config.CALLBACK_CONNECTIONS_PER_RECEIVER) {
      receiver.waiting.push(delivery);
      this.waitingForReceivers++;
      return;
    }
    if (!leaseCoversAttempt(delivery.leaseUntil, Date.now())) {
      this.forgetIfIdle(delivery);
      this.renew(delivery);
      return;
    }
    this.active++;
    receiver.active++;
    this.inFlightGauge.set(this.active);
    const work = this.attempt(delivery)
      .catch((error: unknown) => {
        // Not recorded: the lease runs out and the attempt is made again.
        this.logger.warn({ err: error, deliveryId: delivery.id }, 'callback attempt could not be recorded; it is repeated after the lease');
      })
      .finally(() => {
        this.inFlight.delete(work);
        this.active--;
        receiver.active--;
        this.inFlightGauge.set(this.active);
        const next = receiver.waiting.shift();
        if (next) {
          this.waitingForReceivers--;
          this.start(next);
        } else this.forgetIfIdle(delivery);
        this.startNext();
      });
    this.inFlight.add(work);
  }

  /**
   * Renews the claim of a delivery whose lease no longer covers an attempt (it waited here for a
   * slot or a connection), then starts it; a slow receiver's backlog keeps its place instead of
   * going round the leases. If another replica claimed it after the lease ran out, only that
   * claim attempts it.
   */
  private renew(delivery: HeldDelivery): void {
    const renewed = this.renewals.submit(delivery).then(
      (leaseUntil) => {
        if (leaseUntil !== null) this.start({ ...delivery, leaseUntil });
        else this.logger.debug({ deliveryId: delivery.id }, 'callback waited past its lease and was claimed elsewhere; left to that claim');
      },
      (error: unknown) => this.logger.warn({ err: error, deliveryId: delivery.id }, "could not renew a waiting callback's claim; it is taken up after its lease"),
    );
    void this.track(renewed);
  }

  /** Renews the batch's claims; each item's new lease end, or null when it is no longer this replica's. */
  private async renewBatch(items: HeldDelivery[]): Promise<Array<number | null>> {
    const now = new Date();
    const leaseUntil = this.leaseFrom(now);
    const claims = items.map((item) => ({ id: item.id, attemptsMade: item.attemptsMade, leaseUntil: new Date(item.leaseUntil) }));
    const renewed = await this.transactions.run((tx) => renewClaims(tx.manager, claims, now, leaseUntil));
    return items.map((item) => (renewed.has(item.id) ? leaseUntil.getTime() : null));
  }

  /** Drops the receiver's entry once nothing is in flight to it or waiting for it. */
  private forgetIfIdle(delivery: HeldDelivery): void {
    const key = receiverKey(delivery.url);
    const receiver = this.receivers.get(key);
    if (receiver && receiver.active === 0 && receiver.waiting.length === 0) this.receivers.delete(key);
  }

  /** Fills free slots from the waiting deliveries; with none left while a backlog is due, sweeps again. */
  private startNext(): void {
    while (this.state === 'running' && this.active < this.config.CALLBACK_CONCURRENCY) {
      const next = this.waiting.shift();
      if (!next) {
        if (this.backlog && this.freeSlots() >= Math.ceil(this.config.CALLBACK_CONCURRENCY / 4)) this.sweep();
        return;
      }
      this.start(next);
    }
  }

  private async attempt(delivery: ClaimedDelivery): Promise<void> {
    const attempt = delivery.attemptsMade + 1;
    const secret = delivery.sealedSecret === null ? null : this.secrets.open(delivery.sealedSecret);
    const result = await attemptDelivery(this.guard, delivery, secret, this.config.CALLBACK_MAX_RESPONSE_BYTES);
    const endedAt = Date.now();
    const record: AttemptRecord = {
      deliveryId: delivery.id,
      attempt,
      ...result,
      ...afterAttempt(attempt, result.outcome === 'ACKNOWLEDGED', endedAt),
    };
    const applied = await this.records.submit({ delivery, record });
    this.attemptSeconds.observe(result.durationMs / 1000);
    if (!applied) return;
    this.attemptsTotal.inc({ outcome: result.outcome });
    if (record.status === 'DELIVERED') this.deliveriesTotal.inc({ result: 'delivered' });
    if (record.status === 'FAILED') this.deliveriesTotal.inc({ result: 'failed' });
    this.logger.debug({ deliveryId: delivery.id, invocationId: delivery.invocationId, attempt, outcome: result.outcome, status: result.statusCode }, 'callback attempt');
    if (record.nextAttemptAt !== null) this.arm(delivery.id, record.nextAttemptAt.getTime());
  }

  private async recordBatch(items: Array<{ delivery: ClaimedDelivery; record: AttemptRecord }>): Promise<boolean[]> {
    const now = new Date();
    const applied = await this.transactions.run(async (tx) => {
      const kept = await recordAttempts(tx.manager, items.map((item) => item.record), now);
      const keptKeys = new Set(kept.map((record) => `${record.deliveryId}:${record.attempt}`));
      for (const { delivery, record } of items) {
        if (keptKeys.has(`${record.deliveryId}:${record.attempt}`)) tx.emit(callbackAttemptedMessage(delivery, record));
      }
      return keptKeys;
    });
    return items.map(({ record }) => applied.has(`${record.deliveryId}:${record.attempt}`));
  }

  /** Claims the delivery at `at` (epoch ms) and attempts it. */
  private arm(id: string, at: number): void {
    if (this.state !== 'running' || this.timers.has(id)) return;
    const wake = () => {
      const early = at - Date.now();
      // A timer may go off a millisecond early: never attempt before the wait is over.
      if (early > 0) {
        this.timers.set(id, setTimeout(wake, early));
        return;
      }
      this.timers.delete(id);
      void this.track(this.claimAndStart(id, at));
    };
    this.timers.set(id, setTimeout(wake, Math.max(0, at - Date.now())));
  }

  private async claimAndStart(id: string, dueAt: number): Promise<void> {
    try {
      const now = new Date();
      const leaseUntil = this.leaseFrom(now);
      const claimed = await this.transactions.run((tx) => claimDelivery(tx.manager, id, now, leaseUntil));
      if (!claimed) return; // another replica's sweep took it, or it moved on
      this.retryLateness.observe(Math.max(0, now.getTime() - dueAt) / 1000);
      this.start({ ...claimed, leaseUntil: leaseUntil.getTime() });
    } catch (error) {
      this.logger.warn({ err: error, deliveryId: id }, 'could not claim a due callback; the sweep tries again');
    }
  }

  private sweep(): void {
    if (this.state !== 'running' || this.sweeping) return;
    this.sweeping = this.sweepOnce()
      .catch((error: unknown) => this.logger.warn({ err: error }, 'callback sweep failed; retrying on the next tick'))
      .finally(() => (this.sweeping = undefined));
  }

  private async sweepOnce(): Promise<void> {
    // Only what this replica can start now: the rest stays due for the other replicas' sweeps
    // (or this one's next), instead of waiting here while its lease runs out. With no slot free
    // there may be due deliveries: a slot that frees sweeps again.
    if (this.freeSlots() === 0) this.backlog = true;
    for (let limit = Math.min(SWEEP_BATCH, this.freeSlots()); limit > 0 && this.state === 'running'; limit = Math.min(SWEEP_BATCH, this.freeSlots())) {
      const now = new Date();
      const leaseUntil = this.leaseFrom(now);
      const claimed = await this.transactions.run((tx) => claimDueDeliveries(tx.manager, now, leaseUntil, limit));
      for (const delivery of claimed) this.start({ ...delivery, leaseUntil: leaseUntil.getTime() });
      this.backlog = claimed.length === limit;
      if (!this.backlog) break;
    }
    const horizon = new Date(Date.now() + this.config.CALLBACK_SWEEP_INTERVAL_MS);
    for (const due of await dueSoon(this.transactions.dataSource.manager, horizon, SWEEP_BATCH)) {
      // What is due already while the slots are full is the sweeps' (a timer would claim it
      // into the queue anyway).
      if (this.backlog && due.nextAttemptAt.getTime() <= Date.now()) continue;
      this.arm(due.id, due.nextAttemptAt.getTime());
    }
  }
}

/** Which receiver a callback URL reaches: its scheme, host and port (one connection pool's worth). */
function receiverKey(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.protocol}//${parsed.host}`;
  } catch {
    return url; // the attempt itself refuses it
  }
}

/** Whether a lease ending at `leaseUntil` still covers a whole attempt started at `now` (epoch ms). */
export function leaseCoversAttempt(leaseUntil: number, now: number): boolean {
  return leaseUntil - now >= ACK_WINDOW_MS + START_MARGIN_MS;
}
