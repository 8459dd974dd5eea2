import {
  AckPolicy,
  DeliverPolicy,
  JetStreamApiCodes,
  JetStreamApiError,
  jetstream,
  jetstreamManager,
  RetentionPolicy,
  StorageType,
  type Consumer,
  type ConsumerConfig,
  type JetStreamClient,
  type JetStreamManager,
} from '@nats-io/jetstream';
import {
  connect,
  errors,
  headers as natsHeaders,
  nanos,
  type Msg,
  type MsgHdrs,
  type NatsConnection,
  type Subscription as NatsSubscription,
} from '@nats-io/transport-node';
import type { BusLogger } from './bus-logger.js';
import { errorMessage } from './bus-logger.js';
import './nats-request-cancel.js';
import {
  BusNoRespondersError,
  BusUnavailableError,
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
import { JetStreamSubscription } from './jetstream-subscription.js';
import { toRecord } from './nats-headers.js';
import { assertHeaders, assertName, assertSubject } from './subject-rules.js';

export interface JetStreamBusOptions {
  /**
   * NATS server URL, or several comma-separated (the nodes of a cluster, for example
   * `nats://nats-0:4222,nats://nats-1:4222,nats://nats-2:4222`): the client connects to one and
   * moves to another when it goes away.
   */
  url: string;
  /**
   * Replicas of every stream this bus ensures (`BUS_STREAM_REPLICAS`), 1 to 5, default 1; more
   * than 1 needs a JetStream cluster with at least that many nodes. Set on create, and changed
   * on an existing stream whose replicas differ. Consumers are created without a replica count
   * of their own, so they follow their stream's (nats-server 2.9: on create and when the
   * stream's replicas change).
   */
  streamReplicas?: number;
  /**
   * Isolates everything this bus creates: subject `a.b` becomes `<prefix>.a.b`, stream `X`
   * becomes `<prefix>_X`, durable `d` becomes `<prefix>_d`. Empty or absent: logical names.
   */
  prefix?: string;
  /** Connection name shown by the server's monitoring, for example the service name. */
  name?: string;
  /** Receives consumer-loop and handler failures; nothing sensitive is logged. */
  logger?: BusLogger;
  /** Deadline of `ping()`. Default 2 000 ms. */
  pingTimeoutMs?: number;
}

const DEFAULT_MAX_DELIVER = 10;
const DEFAULT_ACK_WAIT_MS = 30_000;
const DEFAULT_BATCH_SIZE = 16;
const DEFAULT_DUPLICATE_WINDOW_SECONDS = 120;
const DEFAULT_PING_TIMEOUT_MS = 2_000;
/** Between tries of a stream replica change (1 s, 2 s, …). */
const REPLICA_CHANGE_DELAY_MS = 1_000;
/** Marks a reply whose handler threw; the body is the error message. */
const ERROR_HEADER = 'Runline-Error';
/** Tries of a publish that no stream answers (one electing a leader), 100, 200, 300, 400 ms apart. */
const PUBLISH_ATTEMPTS = 5;
const PUBLISH_RETRY_DELAY_MS = 100;
/**
 * How long a request made while disconnected waits for the client to reconnect to another node
 * of a cluster (NATS_URL lists more than one). With one server there is no other node to move
 * to, so such a request is refused at once: the spec's 503 comes within a second.
 */
const RECONNECT_GRACE_MS = 500;
/** How long a start goes on trying JetStream API steps the cluster does not answer yet. */
const STARTUP_RETRY_MS = 30_000;
/** Attempts at changing a stream's replicas while other processes may be changing them too. */
const REPLICA_CHANGE_ATTEMPTS = 5;

/** The servers of a comma-separated `NATS_URL` (`nats://a:4222, nats://b:4222`), as nats.js takes them. */
export function natsServers(url: string): string[] {
  const servers = url
    .split(',')
    .map((server) => server.trim())
    .filter((server) => server !== '');
  if (servers.length === 0) throw new Error('no NATS server given');
  return servers;
}

/** Checks a stream replica count (`BUS_STREAM_REPLICAS`): an integer from 1 to 5, as JetStream allows. */
export function assertStreamReplicas(replicas: number): void {
  if (!Number.isInteger(replicas) || replicas < 1 || replicas > 5) {
    throw new Error(`stream replicas must be an integer from 1 to 5, not ${replicas}`);
  }
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

function toNatsHeaders(record: Record<string, string> | undefined): MsgHdrs | undefined {
  const entries = Object.entries(record ?? {});
  if (entries.length === 0) return undefined;
  const h = natsHeaders();
  for (const [key, value] of entries) h.set(key, value);
  return h;
}

const isApiError = (err: unknown, code: number): boolean => err instanceof JetStreamApiError && err.code === code;

/** JetStream's "temporarily unavailable" (no meta leader yet). */
const CLUSTER_NOT_AVAILABLE = 10008;

/**
 * Runs a JetStream API step of a start (JetStream checked, a stream or consumer made or checked)
 * again while the cluster cannot answer it yet: a request that times out or that nobody answers,
 * or JetStream temporarily unavailable (a meta leader being elected, many processes making R3
 * streams at once). Gives up after STARTUP_RETRY_MS, so a start that cannot succeed still fails.
 */
async function whileStarting<T>(what: string, step: () => Promise<T>, logger: BusLogger | undefined, stopped: () => boolean = () => false): Promise<T> {
  const deadline = Date.now() + STARTUP_RETRY_MS;
  for (let attempt = 1; ; attempt++) {
    try {
      return await step();
    } catch (err) {
      if (!isTransient(err) || Date.now() >= deadline || stopped()) throw err;
      logger?.warn({ what, attempt, err: errorMessage(err) }, 'JetStream did not answer; trying again');
      await new Promise((resolve) => setTimeout(resolve, Math.min(500 * attempt, 3_000)));
    }
  }
}

/** An API request the cluster could not answer yet, as opposed to one it refused. */
function isTransient(err: unknown): boolean {
  if (err instanceof errors.TimeoutError) return true;
  // nats.js reports an API request nobody answered as JetStream not enabled, the request error its cause.
  const request = err instanceof errors.RequestError ? err : err instanceof Error && err.cause instanceof errors.RequestError ? err.cause : undefined;
  if (request && (request.isNoResponders() || request.cause instanceof errors.TimeoutError)) return true;
  return isApiError(err, CLUSTER_NOT_AVAILABLE);
}

/** A stream that cannot have the replicas asked for, said in the deployment's words. */
function replicaError(stream: string, replicas: number, cause: unknown): Error {
  if (replicas === 1) return cause instanceof Error ? cause : new Error(String(cause));
  return new Error(`stream ${stream} with ${replicas} replicas (BUS_STREAM_REPLICAS): ${errorMessage(cause)}`, { cause });
}

function withDeadline<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} took longer than ${ms} ms`)), ms);
  });
  return Promise.race([work, deadline]).finally(() => clearTimeout(timer));
}

/**
 * NATS-mode bus: JetStream streams and durable pull consumers for `publish`/`subscribe`, core
 * NATS request/reply with queue groups for `request`/`reply`. Reconnects forever; readiness
 * should watch `ping()`.
 */
export class JetStreamBus implements Bus {
  private readonly subscriptions = new Set<Subscription>();
  private closing: Promise<void> | undefined;
  /** False from a disconnect until the reconnect: requests then wait briefly, then fail. */
  private connected = true;
  /** Resolves at the next reconnect; replaced at each disconnect. */
  private reconnected: { promise: Promise<void>; resolve: () => void } | undefined;
  /** Told of the next disconnect: the requests in flight. */
  private readonly inFlight = new Set<() => void>();

  private constructor(
    private readonly nc: NatsConnection,
    private readonly js: JetStreamClient,
    private readonly jsm: JetStreamManager,
    private readonly prefix: string,
    private readonly logger: BusLogger | undefined,
    private readonly pingTimeoutMs: number,
    private readonly streamReplicas: number,
    private readonly reconnectGraceMs: number,
  ) {
    void this.watchConnection();
  }

  private async watchConnection(): Promise<void> {
    for await (const status of this.nc.status()) {
      if (status.type === 'disconnect') {
        this.connected = false;
        this.reconnected = signal();
        for (const dropped of [...this.inFlight]) dropped();
      } else if (status.type === 'reconnect') {
        this.connected = true;
        this.reconnected?.resolve();
      }
    }
  }

  /**
   * Waits up to `ms` for the connection to come back. With a cluster the client moves to
   * another node in well under RECONNECT_GRACE_MS, so a request sent as its node goes away is
   * not refused; with NATS down the caller still hears so within a second.
   */
  private async awaitReconnect(ms: number): Promise<boolean> {
    if (this.connected) return true;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.reconnected?.promise, new Promise((resolve) => (timer = setTimeout(resolve, ms)))]);
    clearTimeout(timer);
    return this.connected;
  }

  /** Connects to NATS and checks that JetStream is enabled. */
  static async connect(options: JetStreamBusOptions): Promise<JetStreamBus> {
    const prefix = options.prefix ?? '';
    if (prefix) assertName('bus prefix', prefix);
    const streamReplicas = options.streamReplicas ?? 1;
    assertStreamReplicas(streamReplicas);
    const servers = natsServers(options.url);
    const nc = await connect({
      servers,
      name: options.name,
      maxReconnectAttempts: -1,
      // Otherwise the client captures a stack trace for every request and publish, in case it
      // times out: 18% of the CPU of a request/reply-heavy path (bench/README.md). Our errors
      // name the subject and deadline, which is what a timeout report needs.
      noAsyncTraces: true,
    });
    try {
      const jsm = await whileStarting('JetStream', () => jetstreamManager(nc), options.logger);
      return new JetStreamBus(
        nc,
        jetstream(nc),
        jsm,
        prefix,
        options.logger,
        options.pingTimeoutMs ?? DEFAULT_PING_TIMEOUT_MS,
        streamReplicas,
        servers.length > 1 ? RECONNECT_GRACE_MS : 0,
      );
    } catch (err) {
      await nc.close();
      throw err;
    }
  }

  async ensureStreams(streams: StreamSpec[]): Promise<void> {
    this.assertOpen();
    for (const spec of streams) {
      await this.whileStarting(`stream ${spec.name}`, () => this.ensureStream(spec));
    }
  }

  private async ensureStream(spec: StreamSpec): Promise<void> {
    assertName('stream name', spec.name);
    spec.subjects.forEach((subject) => assertSubject(subject, true));
    const name = this.wireName(spec.name);
    const subjects = spec.subjects.map((subject) => this.wireSubject(subject));
    const duplicateWindow = nanos((spec.duplicateWindowSeconds ?? DEFAULT_DUPLICATE_WINDOW_SECONDS) * 1000);
    const retention = spec.retention === 'workqueue' ? RetentionPolicy.Workqueue : RetentionPolicy.Limits;
    const replicas = this.streamReplicas;
    const info = () =>
      this.jsm.streams.info(name).catch((err: unknown) => {
        if (isApiError(err, JetStreamApiCodes.StreamNotFound)) return undefined;
        throw err;
      });
    let existing = await info();
    if (!existing) {
      try {
        await this.jsm.streams.add({
          name,
          subjects,
          retention,
          storage: StorageType.File,
          duplicate_window: duplicateWindow,
          num_replicas: replicas,
        });
        return;
      } catch (err) {
        // Another service may have created it meanwhile, with other settings: update it below.
        existing = await info();
        if (!existing) throw isTransient(err) ? err : replicaError(spec.name, replicas, err);
      }
    }
    if (existing.config.retention !== retention) {
      throw new Error(`stream ${spec.name} exists with retention ${existing.config.retention}; it cannot change`);
    }
    const sameSubjects =
      existing.config.subjects.length === subjects.length &&
      subjects.every((subject) => existing.config.subjects.includes(subject));
    if (!sameSubjects || existing.config.duplicate_window !== duplicateWindow) {
      await this.jsm.streams.update(name, { subjects, duplicate_window: duplicateWindow });
    }
    if ((existing.config.num_replicas || 1) !== replicas) await this.changeReplicas(spec.name, name, existing.config.num_replicas || 1);
  }

  private whileStarting<T>(what: string, step: () => Promise<T>): Promise<T> {
    return whileStarting(what, step, this.logger, () => this.closing !== undefined);
  }

  /**
   * Changes an existing stream's replicas to `streamReplicas` (a stream update; its consumers
   * follow). Every replica of every service starts with the new value at about the same time, so
   * several may ask at once: nats-server 2.9 then answers one and lets the others time out, so a
   * failed update is checked against the stream's state before it is tried again.
   */
  private async changeReplicas(logicalName: string, name: string, from: number): Promise<void> {
    const replicas = this.streamReplicas;
    for (let attempt = 1; ; attempt++) {
      try {
        await this.jsm.streams.update(name, { num_replicas: replicas });
        this.logger?.warn({ stream: logicalName, from, to: replicas }, 'stream replicas changed');
        return;
      } catch (err) {
        const now = await this.jsm.streams.info(name).catch(() => undefined);
        if (now && (now.config.num_replicas || 1) === replicas) return;
        if (attempt >= REPLICA_CHANGE_ATTEMPTS) throw replicaError(logicalName, replicas, err);
        await new Promise((resolve) => setTimeout(resolve, REPLICA_CHANGE_DELAY_MS * attempt));
      }
    }
  }

  async publish(message: BusMessage): Promise<void> {
    this.assertOpen();
    assertSubject(message.subject, false);
    assertHeaders(message.headers);
    if (!message.id) throw new Error('a published message needs an id');
    const subject = this.wireSubject(message.subject);
    const headers = toNatsHeaders(withTraceHeaders(message.headers));
    for (let attempt = 1; ; attempt++) {
      try {
        await this.js.publish(subject, message.data, { msgID: message.id, headers });
        return;
      } catch (err) {
        // The client reports "no responders" as JetStream not being enabled; connect() already
        // checked that it is, so here it means no stream answers for the subject: none captures
        // it, or the one that does is electing a new leader (its leader's node went away).
        if (!(err instanceof Error && err.cause instanceof errors.RequestError && err.cause.isNoResponders())) throw err;
        // An election takes seconds: tried again for about one before the caller (the outbox
        // relay, whose sweep takes over) hears of it. The same Nats-Msg-Id makes a retry of a
        // stored message a no-op: a new leader rebuilds the duplicate window from the stream.
        if (attempt >= PUBLISH_ATTEMPTS || !this.connected || this.closing) {
          throw new Error(`no stream captures subject ${message.subject}, or its stream has no leader yet`, { cause: err });
        }
        await new Promise((resolve) => setTimeout(resolve, PUBLISH_RETRY_DELAY_MS * attempt));
      }
    }
  }

  async subscribe(spec: DurableSubscriptionSpec, handler: MessageHandler): Promise<Subscription> {
    this.assertOpen();
    assertName('durable name', spec.durable);
    assertSubject(spec.filterSubject, true);
    const stream = this.wireName(spec.stream);
    const durable = this.wireName(spec.durable);
    await this.whileStarting(`consumer ${spec.durable}`, () => this.ensureConsumer(stream, durable, spec));
    const subscription = new JetStreamSubscription(
      this.nc,
      stream,
      durable,
      spec.batchSize ?? DEFAULT_BATCH_SIZE,
      spec.ackWaitMs ?? DEFAULT_ACK_WAIT_MS,
      {
        handler,
        unwire: (subject) => this.logicalSubject(subject),
        logger: this.logger,
        onStopped: () => this.subscriptions.delete(subscription),
        consumer: () => this.durableConsumer(stream, durable, spec),
        exists: () =>
          withDeadline(this.jsm.consumers.info(stream, durable), 5_000, 'consumer info').then(
            () => true,
            (err: unknown) => !isApiError(err, JetStreamApiCodes.ConsumerNotFound),
          ),
      },
    );
    this.subscriptions.add(subscription);
    subscription.start();
    return subscription;
  }

  async request(subject: string, data: Uint8Array, options: RequestOptions): Promise<Uint8Array> {
    this.assertOpen();
    assertSubject(subject, false);
    assertHeaders(options.headers);
    // nats.js would buffer the request until it reconnects or the deadline passes: a request
    // waits for the reconnect only briefly, then fails, so the caller can answer 503 at once.
    const started = performance.now();
    if (!this.connected && !(await this.awaitReconnect(Math.min(this.reconnectGraceMs, options.timeoutMs)))) {
      throw new BusUnavailableError(subject);
    }
    let reply: Msg;
    try {
      const answered = this.nc.request(this.wireSubject(subject), data, {
        timeout: Math.max(1, Math.round(options.timeoutMs - (performance.now() - started))),
        headers: toNatsHeaders(withTraceHeaders(options.headers)),
      });
      // The connection dropped with the request in flight (NATS killed as it went out): it
      // waits for the reconnect as briefly as a new one, then fails, rather than for its deadline.
      let onDrop = () => {};
      const dropped = new Promise<Msg>((resolve, reject) => {
        onDrop = () => {
          const remaining = options.timeoutMs - (performance.now() - started);
          void this.awaitReconnect(Math.max(0, Math.min(this.reconnectGraceMs, remaining))).then((back) =>
            back ? answered.then(resolve, reject) : reject(new BusUnavailableError(subject)),
          );
        };
      });
      this.inFlight.add(onDrop);
      answered.catch(() => undefined);
      try {
        reply = await Promise.race([answered, dropped]);
      } finally {
        this.inFlight.delete(onDrop);
      }
    } catch (err) {
      if (err instanceof errors.TimeoutError) throw new BusTimeoutError(subject, options.timeoutMs);
      if (err instanceof errors.NoRespondersError) throw new BusNoRespondersError(subject);
      if (err instanceof errors.RequestError) {
        if (err.isNoResponders()) throw new BusNoRespondersError(subject);
        if (err.cause instanceof errors.TimeoutError) throw new BusTimeoutError(subject, options.timeoutMs);
      }
      throw err;
    }
    if (reply.headers?.has(ERROR_HEADER)) throw new BusRemoteError(subject, decoder.decode(reply.data));
    return reply.data.slice();
  }

  async reply(subject: string, queue: string, handler: RequestHandler): Promise<Subscription> {
    this.assertOpen();
    assertSubject(subject, true);
    if (!queue || /\s/.test(queue)) throw new Error(`invalid queue group "${queue}"`);
    const responder = new JetStreamResponder(subject, handler, this.logger, () => this.subscriptions.delete(responder));
    responder.start(this.nc, this.wireSubject(subject), queue);
    this.subscriptions.add(responder);
    // The server has the subscription once a flush returns, so a request sent next finds it.
    await this.nc.flush();
    return responder;
  }

  async listen(subject: string, handler: (message: { subject: string; data: Uint8Array }) => void): Promise<Subscription> {
    this.assertOpen();
    assertSubject(subject, true);
    // A plain core subscription: JetStream publishes reach it too, with no consumer on the server.
    const sub = this.nc.subscribe(this.wireSubject(subject), {
      callback: (err, msg) => {
        if (err) {
          this.logger?.error({ subject, err: errorMessage(err) }, 'bus listener failed');
          return;
        }
        try {
          handler({ subject: this.logicalSubject(msg.subject), data: msg.data });
        } catch (error) {
          this.logger?.error({ subject, err: errorMessage(error) }, 'bus listener threw');
        }
      },
    });
    const listener: Subscription = {
      stop: async () => {
        this.subscriptions.delete(listener);
        await sub.drain().catch(() => undefined);
      },
    };
    this.subscriptions.add(listener);
    await this.nc.flush();
    return listener;
  }

  publishLive(subject: string, data: Uint8Array): void {
    this.assertOpen();
    assertSubject(subject, false);
    this.nc.publish(this.wireSubject(subject), data);
  }

  async ping(): Promise<void> {
    this.assertOpen();
    if (this.nc.isClosed()) throw new Error('the NATS connection is closed');
    await withDeadline(this.nc.rtt(), this.pingTimeoutMs, 'NATS ping');
  }

  close(): Promise<void> {
    this.closing ??= (async () => {
      await Promise.all([...this.subscriptions].map((subscription) => subscription.stop()));
      if (!this.nc.isClosed()) await this.nc.drain();
    })();
    return this.closing;
  }

  /** The durable consumer; made again if it is gone (deleted, or lost with a node's store). */
  private async durableConsumer(stream: string, durable: string, spec: DurableSubscriptionSpec): Promise<Consumer> {
    try {
      return await this.js.consumers.get(stream, durable);
    } catch (err) {
      if (!isApiError(err, JetStreamApiCodes.ConsumerNotFound)) throw err;
      this.logger?.warn({ stream, durable }, 'bus consumer is gone; creating it again');
      await this.ensureConsumer(stream, durable, spec);
      return this.js.consumers.get(stream, durable);
    }
  }

  private async ensureConsumer(stream: string, durable: string, spec: DurableSubscriptionSpec): Promise<void> {
    const filterSubject = this.wireSubject(spec.filterSubject);
    const wanted = {
      ack_wait: nanos(spec.ackWaitMs ?? DEFAULT_ACK_WAIT_MS),
      max_deliver: spec.maxDeliver ?? DEFAULT_MAX_DELIVER,
    };
    const existing = await this.jsm.consumers.info(stream, durable).catch((err: unknown) => {
      if (isApiError(err, JetStreamApiCodes.ConsumerNotFound)) return undefined;
      throw err;
    });
    if (!existing) {
      const config: Partial<ConsumerConfig> = {
        durable_name: durable,
        ack_policy: AckPolicy.Explicit,
        deliver_policy: DeliverPolicy.All,
        filter_subject: filterSubject,
        ...wanted,
      };
      await this.jsm.consumers.add(stream, config);
      return;
    }
    if ((existing.config.filter_subject ?? '') !== filterSubject) {
      throw new Error(
        `durable ${spec.durable} exists with filter ${existing.config.filter_subject ?? '(none)'}; it cannot change`,
      );
    }
    if (existing.config.ack_wait !== wanted.ack_wait || existing.config.max_deliver !== wanted.max_deliver) {
      await this.jsm.consumers.update(stream, durable, wanted);
    }
  }

  private wireSubject(subject: string): string {
    return this.prefix ? `${this.prefix}.${subject}` : subject;
  }

  private logicalSubject(subject: string): string {
    return this.prefix && subject.startsWith(`${this.prefix}.`) ? subject.slice(this.prefix.length + 1) : subject;
  }

  private wireName(name: string): string {
    return this.prefix ? `${this.prefix}_${name}` : name;
  }

  private assertOpen(): void {
    if (this.closing) throw new Error('the bus is closed');
  }
}

/** Answers requests on one subject within a queue group; tracks handlers in flight. */
class JetStreamResponder implements Subscription {
  private sub: NatsSubscription | undefined;
  private readonly inFlight = new Set<Promise<void>>();
  private stopping: Promise<void> | undefined;

  constructor(
    private readonly subject: string,
    private readonly handler: RequestHandler,
    private readonly logger: BusLogger | undefined,
    private readonly onStopped: () => void,
  ) {}

  start(nc: NatsConnection, wireSubject: string, queue: string): void {
    this.sub = nc.subscribe(wireSubject, {
      queue,
      callback: (err, msg) => {
        if (err) {
          this.logger?.error({ subject: this.subject, err: errorMessage(err) }, 'bus responder failed');
          return;
        }
        const answering = this.answer(msg);
        this.inFlight.add(answering);
        void answering.then(() => this.inFlight.delete(answering));
      },
    });
  }

  stop(): Promise<void> {
    this.stopping ??= (async () => {
      this.onStopped();
      // Drain, so requests already routed to this subscriber are answered, not dropped.
      await this.sub?.drain().catch(() => undefined);
      await Promise.all(this.inFlight);
    })();
    return this.stopping;
  }

  private async answer(msg: Msg): Promise<void> {
    if (!msg.reply) return;
    let data: Uint8Array;
    let h: MsgHdrs | undefined;
    try {
      data = await this.handler(msg.data.slice(), toRecord(msg.headers));
    } catch (err) {
      data = encoder.encode(errorMessage(err));
      h = natsHeaders();
      h.set(ERROR_HEADER, 'true');
    }
    try {
      msg.respond(data, h ? { headers: h } : undefined);
    } catch (err) {
      this.logger?.warn({ subject: this.subject, err: errorMessage(err) }, 'bus could not send a reply');
    }
  }
}

/** A promise with its resolve, for the connection's state changes. */
function signal(): { promise: Promise<void>; resolve: () => void } {
  let resolve = () => {};
  const promise = new Promise<void>((done) => (resolve = done));
  return { promise, resolve };
}
