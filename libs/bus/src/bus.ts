/**
 * The bus contract. Two implementations honour it: `JetStreamBus` (NATS mode) and
 * `InProcessBus` (embedded mode). One contract test suite runs against both, so code written
 * against this interface behaves the same in a single process and across many.
 *
 * The bus moves bytes. It knows nothing of envelopes or protobuf: `@runline/contracts` encodes
 * and decodes; the Nest transport (`BusServer`) takes a codec for that.
 *
 * Every subject and stream name passed in is *logical* (`invocation.evt.queued`). An
 * implementation created with a `prefix` prepends it on the wire, so test runs and
 * deployments sharing one NATS server never see each other's messages.
 */

/** A message to publish durably. */
export interface BusMessage {
  /** Unique id of the message; the dedupe key (`Nats-Msg-Id`). Republishing an id is a no-op. */
  id: string;
  /** Logical subject, for example `gateway.evt.api-settings-changed`. */
  subject: string;
  data: Uint8Array;
  headers?: Record<string, string>;
}

/** A JetStream stream (or its in-process equivalent): a durable log over a set of subjects. */
export interface StreamSpec {
  /** Logical name, for example `GATEWAY_EVENTS`. */
  name: string;
  /** Logical subjects, wildcards allowed (`gateway.evt.>`). */
  subjects: string[];
  /** `workqueue`: a message is removed once acknowledged (commands). `limits`: kept (events). */
  retention: 'limits' | 'workqueue';
  /** Seconds within which a repeated message id is dropped. Default 120. */
  duplicateWindowSeconds?: number;
}

/** A message handed to a durable subscriber. Exactly one of ack / nak / term settles it. */
export interface DeliveredMessage extends BusMessage {
  /** 1 on first delivery, 2 on the first redelivery, and so on. */
  deliveryCount: number;
  /** Done: never deliver again. */
  ack(): Promise<void>;
  /** Failed: deliver again, after `delayMs` if given. */
  nak(delayMs?: number): Promise<void>;
  /** Poison: never deliver again, and do not count it as processed. */
  term(): Promise<void>;
  /**
   * The handler keeps the message and settles it itself after it returns (work that must wait,
   * for example until a time): returning then neither acks nor naks it, and the subscriber takes
   * its next message at once. Left unsettled, it is redelivered after ack wait like any other.
   * A handler that throws still has its unsettled message nak'ed.
   */
  settleLater(): void;
}

/**
 * A durable pull consumer. All subscribers with the same `durable` name share the messages
 * (queue semantics across replicas); each message goes to one of them.
 */
export interface DurableSubscriptionSpec {
  stream: string;
  /** Consumer name, stable across restarts, shared by replicas of one service. */
  durable: string;
  /** Logical subject filter (one per consumer: nats-server 2.9 has no multi-filter). */
  filterSubject: string;
  /** Redeliveries stop after this many attempts. Default 10. */
  maxDeliver?: number;
  /** Unsettled messages are redelivered after this long. Default 30 000 ms. */
  ackWaitMs?: number;
  /** Messages fetched per pull. Small, so shutdown fits the grace period. Default 16. */
  batchSize?: number;
}

/**
 * Handles one delivered message. If it returns without settling the message, the bus acks it
 * (unless the handler called `settleLater`); if it throws without settling, the bus naks it
 * (redelivery).
 */
export type MessageHandler = (message: DeliveredMessage) => Promise<void>;

/** Answers one request. Throwing sends an error reply; the requester gets `BusRemoteError`. */
export type RequestHandler = (data: Uint8Array, headers: Record<string, string>) => Promise<Uint8Array>;

export interface RequestOptions {
  /** The request fails with `BusTimeoutError` after this long. */
  timeoutMs: number;
  headers?: Record<string, string>;
}

export interface Subscription {
  /** Stops taking new messages and waits for handlers in progress to finish. */
  stop(): Promise<void>;
}

export interface Bus {
  /** Creates or updates the streams. Idempotent; every service calls it at start. */
  ensureStreams(streams: StreamSpec[]): Promise<void>;
  /** Publishes durably: resolves once the stream has stored the message (or dropped a duplicate). */
  publish(message: BusMessage): Promise<void>;
  /** Starts a durable pull consumer and hands each message to `handler`. */
  subscribe(spec: DurableSubscriptionSpec, handler: MessageHandler): Promise<Subscription>;
  /** Sends a request and waits for one reply within `timeoutMs`. */
  request(subject: string, data: Uint8Array, options: RequestOptions): Promise<Uint8Array>;
  /** Answers requests on `subject`; replicas with the same `queue` share them. */
  reply(subject: string, queue: string, handler: RequestHandler): Promise<Subscription>;
  /**
   * Hears every message published on subjects matching `subject` (wildcards allowed) from now
   * on, durable publishes included, with no consumer, no acknowledgement and no redelivery
   * (core NATS): a listener gets a message if it is connected (a republished one may come
   * twice), or never. For what may be missed (a live view that reads the durable history to
   * fill a gap).
   */
  listen(subject: string, handler: (message: { subject: string; data: Uint8Array }) => void): Promise<Subscription>;
  /**
   * Publishes to listeners only (core NATS): not acknowledged, lost when no one listens. For
   * subjects no stream captures: JetStream stores whatever is published on a captured subject.
   */
  publishLive(subject: string, data: Uint8Array): void;
  /** Resolves when the transport is usable (readiness probe). */
  ping(): Promise<void>;
  /** Graceful shutdown: stops subscriptions, lets handlers finish, drains, disconnects. */
  close(): Promise<void>;
}

/** No reply within the deadline. */
export class BusTimeoutError extends Error {
  constructor(readonly subject: string, readonly timeoutMs: number) {
    super(`no reply on ${subject} within ${timeoutMs} ms`);
    this.name = 'BusTimeoutError';
  }
}

/** Nobody is listening on the subject. */
export class BusNoRespondersError extends Error {
  constructor(readonly subject: string) {
    super(`no responders on ${subject}`);
    this.name = 'BusNoRespondersError';
  }
}

/**
 * The transport is down right now (NATS disconnected, reconnecting): the request was not sent.
 * Answered within half a second (the client gets that long to reconnect, to another node of a
 * cluster) rather than after the deadline, so a caller can say 503 within a second.
 */
export class BusUnavailableError extends Error {
  constructor(readonly subject: string) {
    super(`the bus is not connected; ${subject} was not sent`);
    this.name = 'BusUnavailableError';
  }
}

/**
 * True when a request got no answer: nobody listening, none in time, or no bus. The caller may
 * say "unavailable, retry shortly"; any other error is a failed call.
 */
export function isUnanswered(error: unknown): boolean {
  return error instanceof BusTimeoutError || error instanceof BusNoRespondersError || error instanceof BusUnavailableError;
}

/** The responder's handler threw; `message` is its error message. */
export class BusRemoteError extends Error {
  constructor(readonly subject: string, message: string) {
    super(message);
    this.name = 'BusRemoteError';
  }
}
