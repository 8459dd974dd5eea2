import type { BusLogger } from './bus-logger.js';
import { errorMessage } from './bus-logger.js';
import {
  BusNoRespondersError,
  BusRemoteError,
  BusTimeoutError,
  type Bus,
  type BusMessage,
  type DurableSubscriptionSpec,
  type MessageHandler,
  type RequestHandler,
  type RequestOptions,
  type StreamSpec,
  type Subscription,
} from './bus.js';
import { withTraceHeaders } from './bus-tracing.js';
import { runHandler, type Settle } from './settlement.js';
import { assertHeaders, assertName, assertSubject, subjectMatches, subjectsOverlap } from './subject-rules.js';

export interface InProcessBusOptions {
  /** Receives handler failures; nothing sensitive is logged. */
  logger?: BusLogger;
  /**
   * Most messages a `limits` stream keeps in memory; the oldest are dropped first, as with a
   * JetStream `max_msgs` limit. Default 100 000.
   */
  maxMessagesPerStream?: number;
  /**
   * Most messages a `limits` stream keeps once every durable on it has settled them (what a
   * durable created later would still read); messages a durable has not settled yet are never
   * dropped by this rule. Nothing survives the process in embedded mode and its durables are
   * made at start, so keeping every event of a busy system until `maxMessagesPerStream` would
   * only hold memory. Default 10 000.
   */
  keepSettledMessages?: number;
  /**
   * Most message ids a stream remembers for its duplicate window; beyond it the oldest are
   * forgotten early. Duplicates come from the outbox relay within seconds, and consumers
   * dedupe too (inbox, guarded transitions), so this bounds memory under a long burst without
   * letting a copy through in practice. Default 100 000.
   */
  maxDuplicateIds?: number;
}

const DEFAULT_MAX_DELIVER = 10;
const DEFAULT_ACK_WAIT_MS = 30_000;
const DEFAULT_DUPLICATE_WINDOW_SECONDS = 120;
const DEFAULT_MAX_MESSAGES_PER_STREAM = 100_000;
const DEFAULT_KEEP_SETTLED_MESSAGES = 10_000;
const DEFAULT_MAX_DUPLICATE_IDS = 100_000;
/** Settled messages are looked for once per this many appends and settlements (the look is O(durables + unsettled)). */
const PRUNE_EVERY = 256;

interface StoredMessage extends BusMessage {
  seq: number;
  headers: Record<string, string>;
}

const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

class MemoryStream {
  readonly messages = new Map<number, StoredMessage>();
  readonly consumers = new Map<string, MemoryConsumer>();
  lastSeq = 0;
  // Insertion order is arrival order, so expired ids are always at the front.
  private readonly recentIds = new Map<string, number>();

  private changesSincePrune = 0;

  constructor(
    public spec: StreamSpec,
    private readonly maxMessages: number,
    private readonly keepSettled: number,
    private readonly maxDuplicateIds: number,
  ) {}

  get duplicateWindowMs(): number {
    return (this.spec.duplicateWindowSeconds ?? DEFAULT_DUPLICATE_WINDOW_SECONDS) * 1000;
  }

  captures(subject: string): boolean {
    return this.spec.subjects.some((pattern) => subjectMatches(pattern, subject));
  }

  /** Stores the message unless its id was seen within the window; says whether it stored it. */
  append(message: BusMessage): boolean {
    const now = performance.now();
    for (const [id, at] of this.recentIds) {
      if (at > now - this.duplicateWindowMs && this.recentIds.size < this.maxDuplicateIds) break;
      this.recentIds.delete(id);
    }
    if (this.recentIds.has(message.id)) return false;
    this.recentIds.set(message.id, now);
    const seq = ++this.lastSeq;
    this.messages.set(seq, {
      seq,
      id: message.id,
      subject: message.subject,
      data: message.data.slice(),
      headers: { ...message.headers },
    });
    if (this.spec.retention === 'limits') {
      while (this.messages.size > this.maxMessages) {
        const oldest = this.messages.keys().next();
        if (oldest.done) break;
        this.messages.delete(oldest.value);
      }
      this.countTowardsPrune();
    }
    return true;
  }

  /** A message was appended or settled: once per PRUNE_EVERY of those, settled messages are dropped. */
  countTowardsPrune(): void {
    if (this.spec.retention !== 'limits' || ++this.changesSincePrune < PRUNE_EVERY) return;
    this.changesSincePrune = 0;
    this.pruneSettled();
  }

  /** Drops the oldest messages every durable has settled, beyond the `keepSettled` newest of them. */
  private pruneSettled(): void {
    if (this.consumers.size === 0) return;
    let floor = this.lastSeq + 1;
    for (const consumer of this.consumers.values()) floor = Math.min(floor, consumer.settledBelow());
    for (const seq of this.messages.keys()) {
      if (seq >= floor - this.keepSettled) break;
      this.messages.delete(seq);
    }
  }

  firstSeq(): number {
    const first = this.messages.keys().next();
    return first.done ? this.lastSeq + 1 : first.value;
  }
}

interface PendingDelivery {
  deliveries: number;
  /** Bumped on every delivery, so a nak or an ack-wait timer of an older delivery is ignored. */
  generation: number;
  state: 'delivered' | 'delayed' | 'ready';
  timer?: NodeJS.Timeout;
}

/** A durable consumer: its position and unsettled messages outlive the subscribers. */
class MemoryConsumer {
  private nextSeq = 1;
  private readonly pending = new Map<number, PendingDelivery>();
  private readonly ready: number[] = [];
  private readonly idle: MemorySubscriber[] = [];
  private pumpScheduled = false;

  constructor(
    readonly stream: MemoryStream,
    readonly name: string,
    readonly filterSubject: string,
    public maxDeliver: number,
    public ackWaitMs: number,
  ) {}

  /** Every message of the stream below this sequence is settled here (or was never for this durable). */
  settledBelow(): number {
    let floor = this.nextSeq;
    for (const seq of this.pending.keys()) floor = Math.min(floor, seq);
    return floor;
  }

  attach(subscriber: MemorySubscriber): void {
    this.release(subscriber);
  }

  detach(subscriber: MemorySubscriber): void {
    const index = this.idle.indexOf(subscriber);
    if (index !== -1) this.idle.splice(index, 1);
  }

  release(subscriber: MemorySubscriber): void {
    this.idle.push(subscriber);
    this.wake();
  }

  /** Schedules delivery on a later turn of the event loop, never inside the caller. */
  wake(): void {
    if (this.pumpScheduled || this.idle.length === 0) return;
    this.pumpScheduled = true;
    setImmediate(() => {
      this.pumpScheduled = false;
      this.pump();
    });
  }

  clearTimers(): void {
    for (const entry of this.pending.values()) clearTimeout(entry.timer);
  }

  private pump(): void {
    while (this.idle.length > 0) {
      const seq = this.takeNext();
      if (seq === undefined) return;
      const subscriber = this.idle.shift();
      if (subscriber) this.deliver(subscriber, seq);
    }
  }

  // Redeliveries go before new messages, as JetStream does.
  private takeNext(): number | undefined {
    for (let seq = this.ready.shift(); seq !== undefined; seq = this.ready.shift()) {
      if (this.pending.get(seq)?.state !== 'ready') continue;
      if (this.stream.messages.has(seq)) return seq;
      this.pending.delete(seq);
    }
    for (let seq = Math.max(this.nextSeq, this.stream.firstSeq()); seq <= this.stream.lastSeq; seq++) {
      this.nextSeq = seq + 1;
      const stored = this.stream.messages.get(seq);
      if (stored && subjectMatches(this.filterSubject, stored.subject)) return seq;
    }
    return undefined;
  }

  private deliver(subscriber: MemorySubscriber, seq: number): void {
    const stored = this.stream.messages.get(seq);
    if (!stored) return;
    const entry = this.pending.get(seq) ?? { deliveries: 0, generation: 0, state: 'delivered' };
    this.pending.set(seq, entry);
    entry.deliveries++;
    const generation = ++entry.generation;
    entry.state = 'delivered';
    entry.timer = setTimeout(() => this.retry(seq, generation, 0), this.ackWaitMs);
    const settle: Settle = {
      ack: async () => this.finish(seq),
      nak: async (delayMs?: number) => this.retry(seq, generation, delayMs ?? 0),
      term: async () => this.finish(seq),
    };
    subscriber.process(
      {
        id: stored.id,
        subject: stored.subject,
        data: stored.data.slice(),
        headers: { ...stored.headers },
        deliveryCount: entry.deliveries,
      },
      settle,
    );
  }

  // An ack from an older delivery still counts, as in JetStream: the message was processed.
  private finish(seq: number): void {
    const entry = this.pending.get(seq);
    if (!entry) return;
    clearTimeout(entry.timer);
    this.pending.delete(seq);
    if (this.stream.spec.retention === 'workqueue') this.stream.messages.delete(seq);
    else this.stream.countTowardsPrune();
  }

  private retry(seq: number, generation: number, delayMs: number): void {
    const entry = this.pending.get(seq);
    if (!entry || entry.generation !== generation || entry.state !== 'delivered') return;
    clearTimeout(entry.timer);
    entry.timer = undefined;
    if (entry.deliveries >= this.maxDeliver) {
      // JetStream stops redelivering but keeps the message; in memory we let it go.
      this.finish(seq);
      return;
    }
    if (delayMs > 0) {
      entry.state = 'delayed';
      entry.timer = setTimeout(() => this.makeReady(seq, generation), delayMs);
    } else {
      this.makeReady(seq, generation);
    }
  }

  private makeReady(seq: number, generation: number): void {
    const entry = this.pending.get(seq);
    if (!entry || entry.generation !== generation) return;
    entry.timer = undefined;
    entry.state = 'ready';
    this.ready.push(seq);
    this.wake();
  }
}

/** One subscriber of a durable: handles one message at a time. */
class MemorySubscriber implements Subscription {
  private stopping = false;
  private inFlight: Promise<void> | undefined;

  constructor(
    private readonly consumer: MemoryConsumer,
    private readonly handler: MessageHandler,
    private readonly logger: BusLogger | undefined,
    private readonly onStopped: (subscriber: MemorySubscriber) => void,
  ) {}

  process(fields: BusMessage & { deliveryCount: number }, settle: Settle): void {
    const context = { stream: this.consumer.stream.spec.name, durable: this.consumer.name, logger: this.logger };
    this.inFlight = runHandler(fields, settle, this.handler, context).finally(() => {
      this.inFlight = undefined;
      if (!this.stopping) this.consumer.release(this);
    });
  }

  async stop(): Promise<void> {
    if (!this.stopping) {
      this.stopping = true;
      this.consumer.detach(this);
      this.onStopped(this);
    }
    await this.inFlight;
  }
}

class MemoryResponder implements Subscription {
  /** Order of last use, so a queue group hands requests round-robin. */
  lastServed = 0;
  private stopped = false;
  private readonly inFlight = new Set<Promise<void>>();

  constructor(
    readonly subject: string,
    readonly queue: string,
    private readonly handler: RequestHandler,
    private readonly onStopped: (responder: MemoryResponder) => void,
  ) {}

  handle(data: Uint8Array, headers: Record<string, string>): Promise<Uint8Array> {
    const reply = (async () => {
      await nextTurn();
      return this.handler(data, headers);
    })();
    const tracked = reply.then(
      () => undefined,
      () => undefined,
    );
    this.inFlight.add(tracked);
    void tracked.then(() => this.inFlight.delete(tracked));
    return reply;
  }

  async stop(): Promise<void> {
    if (!this.stopped) {
      this.stopped = true;
      this.onStopped(this);
    }
    await Promise.all(this.inFlight);
  }
}

/**
 * Embedded-mode bus: the `Bus` contract in one process, with JetStream's delivery semantics
 * (durable consumers, queue semantics, dedupe window, at-least-once with ack-wait expiry, nak
 * delays, max deliveries, term) and core NATS request/reply. Nothing survives the process.
 *
 * It refuses what a NATS server refuses (overlapping streams, overlapping consumers on a
 * workqueue stream, a durable's filter changing), so a setup that works here also works in
 * NATS mode. Each subscriber handles one message at a time; `batchSize` has no effect here.
 * Unlike a NATS server, a `limits` stream keeps only the newest `keepSettledMessages` of the
 * messages every durable settled (memory is the store here, and a busy system's events would
 * otherwise pile up to `maxMessagesPerStream`).
 */
export class InProcessBus implements Bus {
  private readonly streams = new Map<string, MemoryStream>();
  private readonly subscribers = new Set<MemorySubscriber>();
  private readonly responders = new Set<MemoryResponder>();
  private readonly listeners = new Set<{ subject: string; handler: (message: { subject: string; data: Uint8Array }) => void }>();
  private servedCounter = 0;
  private closing: Promise<void> | undefined;

  constructor(private readonly options: InProcessBusOptions = {}) {}

  async ensureStreams(streams: StreamSpec[]): Promise<void> {
    this.assertOpen();
    for (const spec of streams) {
      assertName('stream name', spec.name);
      if (spec.subjects.length === 0) throw new Error(`stream ${spec.name} needs at least one subject`);
      spec.subjects.forEach((subject) => assertSubject(subject, true));
      for (const other of this.streams.values()) {
        if (other.spec.name === spec.name) continue;
        const clash = spec.subjects.some((a) => other.spec.subjects.some((b) => subjectsOverlap(a, b)));
        if (clash) throw new Error(`subjects of stream ${spec.name} overlap those of stream ${other.spec.name}`);
      }
      const copy: StreamSpec = { ...spec, subjects: [...spec.subjects] };
      const existing = this.streams.get(spec.name);
      if (!existing) {
        this.streams.set(
          spec.name,
          new MemoryStream(
            copy,
            this.options.maxMessagesPerStream ?? DEFAULT_MAX_MESSAGES_PER_STREAM,
            this.options.keepSettledMessages ?? DEFAULT_KEEP_SETTLED_MESSAGES,
            this.options.maxDuplicateIds ?? DEFAULT_MAX_DUPLICATE_IDS,
          ),
        );
      } else if (existing.spec.retention !== spec.retention) {
        throw new Error(`stream ${spec.name} exists with retention ${existing.spec.retention}; it cannot change`);
      } else {
        existing.spec = copy;
      }
    }
  }

  async publish(message: BusMessage): Promise<void> {
    this.assertOpen();
    assertSubject(message.subject, false);
    assertHeaders(message.headers);
    if (!message.id) throw new Error('a published message needs an id');
    const stream = [...this.streams.values()].find((candidate) => candidate.captures(message.subject));
    if (!stream) throw new Error(`no stream captures subject ${message.subject}`);
    if (stream.append({ ...message, headers: withTraceHeaders(message.headers) })) {
      for (const consumer of stream.consumers.values()) consumer.wake();
      // As core NATS does: the stored message goes to every listener too (a duplicate does not).
      this.publishLive(message.subject, message.data);
    }
  }

  async listen(subject: string, handler: (message: { subject: string; data: Uint8Array }) => void): Promise<Subscription> {
    this.assertOpen();
    assertSubject(subject, true);
    const listener = { subject, handler };
    this.listeners.add(listener);
    return { stop: async () => void this.listeners.delete(listener) };
  }

  publishLive(subject: string, data: Uint8Array): void {
    this.assertOpen();
    assertSubject(subject, false);
    for (const listener of this.listeners) {
      if (!subjectMatches(listener.subject, subject)) continue;
      const copy = data.slice();
      // Asynchronous, as a network hop is: a listener never runs inside the publisher's call.
      queueMicrotask(() => {
        try {
          listener.handler({ subject, data: copy });
        } catch {
          // A listener's failure is its own; the publisher never hears of it.
        }
      });
    }
  }

  async subscribe(spec: DurableSubscriptionSpec, handler: MessageHandler): Promise<Subscription> {
    this.assertOpen();
    assertName('durable name', spec.durable);
    assertSubject(spec.filterSubject, true);
    const stream = this.streams.get(spec.stream);
    if (!stream) throw new Error(`stream ${spec.stream} not found`);
    if (!stream.spec.subjects.some((subject) => subjectsOverlap(subject, spec.filterSubject))) {
      throw new Error(`filter ${spec.filterSubject} is not within the subjects of stream ${spec.stream}`);
    }
    const maxDeliver = spec.maxDeliver ?? DEFAULT_MAX_DELIVER;
    const ackWaitMs = spec.ackWaitMs ?? DEFAULT_ACK_WAIT_MS;
    let consumer = stream.consumers.get(spec.durable);
    if (consumer) {
      if (consumer.filterSubject !== spec.filterSubject) {
        throw new Error(`durable ${spec.durable} exists with filter ${consumer.filterSubject}; it cannot change`);
      }
      consumer.maxDeliver = maxDeliver;
      consumer.ackWaitMs = ackWaitMs;
    } else {
      if (stream.spec.retention === 'workqueue') {
        for (const other of stream.consumers.values()) {
          if (subjectsOverlap(other.filterSubject, spec.filterSubject)) {
            throw new Error(
              `workqueue stream ${spec.stream} already has durable ${other.name} on overlapping subjects`,
            );
          }
        }
      }
      consumer = new MemoryConsumer(stream, spec.durable, spec.filterSubject, maxDeliver, ackWaitMs);
      stream.consumers.set(spec.durable, consumer);
    }
    const subscriber = new MemorySubscriber(consumer, handler, this.options.logger, (stopped) =>
      this.subscribers.delete(stopped),
    );
    this.subscribers.add(subscriber);
    consumer.attach(subscriber);
    return subscriber;
  }

  async request(subject: string, data: Uint8Array, options: RequestOptions): Promise<Uint8Array> {
    this.assertOpen();
    assertSubject(subject, false);
    assertHeaders(options.headers);
    if (!(options.timeoutMs > 0)) throw new Error('request timeoutMs must be greater than 0');
    const groups = new Map<string, MemoryResponder[]>();
    for (const responder of this.responders) {
      if (!subjectMatches(responder.subject, subject)) continue;
      groups.set(responder.queue, [...(groups.get(responder.queue) ?? []), responder]);
    }
    if (groups.size === 0) throw new BusNoRespondersError(subject);
    return new Promise<Uint8Array>((resolve, reject) => {
      let answered = false;
      const timer = setTimeout(() => {
        answered = true;
        reject(new BusTimeoutError(subject, options.timeoutMs));
      }, options.timeoutMs);
      const answer = (settle: () => void): void => {
        if (answered) return;
        answered = true;
        clearTimeout(timer);
        settle();
      };
      // Like NATS: one member of every queue group gets the request; the first answer wins.
      for (const members of groups.values()) {
        const chosen = members.reduce((a, b) => (b.lastServed < a.lastServed ? b : a));
        chosen.lastServed = ++this.servedCounter;
        chosen.handle(data.slice(), { ...withTraceHeaders(options.headers) }).then(
          (reply) => answer(() => resolve(reply.slice())),
          (err: unknown) => answer(() => reject(new BusRemoteError(subject, errorMessage(err)))),
        );
      }
    });
  }

  async reply(subject: string, queue: string, handler: RequestHandler): Promise<Subscription> {
    this.assertOpen();
    assertSubject(subject, true);
    if (!queue || /\s/.test(queue)) throw new Error(`invalid queue group "${queue}"`);
    const responder = new MemoryResponder(subject, queue, handler, (stopped) => this.responders.delete(stopped));
    this.responders.add(responder);
    return responder;
  }

  async ping(): Promise<void> {
    this.assertOpen();
  }

  close(): Promise<void> {
    this.closing ??= (async () => {
      this.listeners.clear();
      await Promise.all([...this.subscribers, ...this.responders].map((subscription) => subscription.stop()));
      for (const stream of this.streams.values()) {
        for (const consumer of stream.consumers.values()) consumer.clearTimers();
      }
    })();
    return this.closing;
  }

  private assertOpen(): void {
    if (this.closing) throw new Error('the bus is closed');
  }
}
