import {
  AckPolicy,
  DeliverPolicy,
  JetStreamApiCodes,
  JetStreamApiError,
  jetstream,
  jetstreamManager,
  RetentionPolicy,
  StorageType,
  type ConsumerConfig,
  type ConsumerMessages,
  type JetStreamClient,
  type JetStreamManager,
  type JsMsg,
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
import { runHandler } from './settlement.js';
import { assertHeaders, assertName, assertSubject } from './subject-rules.js';

export interface JetStreamBusOptions {
  /** NATS server URL(s), comma-separated, for example `nats://127.0.0.1:4222`. */
  url: string;
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
const MSG_ID_HEADER = 'Nats-Msg-Id';
/** Marks a reply whose handler threw; the body is the error message. */
const ERROR_HEADER = 'Runline-Error';
const RESTART_DELAY_MS = 1_000;

const encoder = new TextEncoder();
const decoder = new TextDecoder();

function toRecord(h: MsgHdrs | undefined): Record<string, string> {
  const record: Record<string, string> = {};
  for (const key of h?.keys() ?? []) {
    if (!/^nats-/i.test(key)) record[key] = h?.get(key) ?? '';
  }
  return record;
}

function toNatsHeaders(record: Record<string, string> | undefined): MsgHdrs | undefined {
  const entries = Object.entries(record ?? {});
  if (entries.length === 0) return undefined;
  const h = natsHeaders();
  for (const [key, value] of entries) h.set(key, value);
  return h;
}

const isApiError = (err: unknown, code: number): boolean => err instanceof JetStreamApiError && err.code === code;

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
  /** False from a disconnect until the reconnect: requests then fail at once. */
  private connected = true;

  private constructor(
    private readonly nc: NatsConnection,
    private readonly js: JetStreamClient,
    private readonly jsm: JetStreamManager,
    private readonly prefix: string,
    private readonly logger: BusLogger | undefined,
    private readonly pingTimeoutMs: number,
  ) {
    void this.watchConnection();
  }

  private async watchConnection(): Promise<void> {
    for await (const status of this.nc.status()) {
      if (status.type === 'disconnect') this.connected = false;
      else if (status.type === 'reconnect') this.connected = true;
    }
  }

  /** Connects to NATS and checks that JetStream is enabled. */
  static async connect(options: JetStreamBusOptions): Promise<JetStreamBus> {
    const prefix = options.prefix ?? '';
    if (prefix) assertName('bus prefix', prefix);
    const nc = await connect({
      servers: options.url.split(',').map((url) => url.trim()),
      name: options.name,
      maxReconnectAttempts: -1,
      // Otherwise the client captures a stack trace for every request and publish, in case it
      // times out: 18% of the CPU of a request/reply-heavy path (bench/README.md). Our errors
      // name the subject and deadline, which is what a timeout report needs.
      noAsyncTraces: true,
    });
    try {
      const jsm = await jetstreamManager(nc);
      return new JetStreamBus(
        nc,
        jetstream(nc),
        jsm,
        prefix,
        options.logger,
        options.pingTimeoutMs ?? DEFAULT_PING_TIMEOUT_MS,
      );
    } catch (err) {
      await nc.close();
      throw err;
    }
  }

  async ensureStreams(streams: StreamSpec[]): Promise<void> {
    this.assertOpen();
    for (const spec of streams) {
      assertName('stream name', spec.name);
      spec.subjects.forEach((subject) => assertSubject(subject, true));
      const name = this.wireName(spec.name);
      const subjects = spec.subjects.map((subject) => this.wireSubject(subject));
      const duplicateWindow = nanos((spec.duplicateWindowSeconds ?? DEFAULT_DUPLICATE_WINDOW_SECONDS) * 1000);
      const retention = spec.retention === 'workqueue' ? RetentionPolicy.Workqueue : RetentionPolicy.Limits;
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
          });
          continue;
        } catch (err) {
          // Another service may have created it meanwhile, with other settings: update it below.
          existing = await info();
          if (!existing) throw err;
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
    }
  }

  async publish(message: BusMessage): Promise<void> {
    this.assertOpen();
    assertSubject(message.subject, false);
    assertHeaders(message.headers);
    if (!message.id) throw new Error('a published message needs an id');
    try {
      await this.js.publish(this.wireSubject(message.subject), message.data, {
        msgID: message.id,
        headers: toNatsHeaders(withTraceHeaders(message.headers)),
      });
    } catch (err) {
      // The client reports "no responders" as JetStream not being enabled; connect() already
      // checked that it is, so here it means no stream captures the subject.
      if (err instanceof Error && err.cause instanceof errors.RequestError && err.cause.isNoResponders()) {
        throw new Error(`no stream captures subject ${message.subject}`, { cause: err });
      }
      throw err;
    }
  }

  async subscribe(spec: DurableSubscriptionSpec, handler: MessageHandler): Promise<Subscription> {
    this.assertOpen();
    assertName('durable name', spec.durable);
    assertSubject(spec.filterSubject, true);
    const stream = this.wireName(spec.stream);
    const durable = this.wireName(spec.durable);
    await this.ensureConsumer(stream, durable, spec);
    const subscription = new JetStreamSubscription(
      this.js,
      this.nc,
      stream,
      durable,
      spec.batchSize ?? DEFAULT_BATCH_SIZE,
      {
        handler,
        unwire: (subject) => this.logicalSubject(subject),
        logger: this.logger,
        onStopped: () => this.subscriptions.delete(subscription),
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
    // nats.js would buffer the request until it reconnects or the deadline passes.
    if (!this.connected) throw new BusUnavailableError(subject);
    let reply: Msg;
    try {
      reply = await this.nc.request(this.wireSubject(subject), data, {
        timeout: options.timeoutMs,
        headers: toNatsHeaders(withTraceHeaders(options.headers)),
      });
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

interface SubscriptionWiring {
  handler: MessageHandler;
  unwire: (subject: string) => string;
  logger: BusLogger | undefined;
  onStopped: () => void;
}

/** One subscriber of a durable pull consumer: pulls small batches, handles one message at a time. */
class JetStreamSubscription implements Subscription {
  private messages: ConsumerMessages | undefined;
  private stopping = false;
  private loop: Promise<void> = Promise.resolve();
  private wakeUp: (() => void) | undefined;

  constructor(
    private readonly js: JetStreamClient,
    private readonly nc: NatsConnection,
    private readonly stream: string,
    private readonly durable: string,
    private readonly batchSize: number,
    private readonly wiring: SubscriptionWiring,
  ) {}

  start(): void {
    this.loop = this.run();
  }

  async stop(): Promise<void> {
    if (!this.stopping) {
      this.stopping = true;
      this.wiring.onStopped();
      // Closing the iterator from here, not from inside its loop, is what lets the loop end.
      void this.messages?.close();
      this.wakeUp?.();
    }
    await this.loop;
  }

  private async run(): Promise<void> {
    while (!this.stopping && !this.nc.isClosed()) {
      try {
        const consumer = await this.js.consumers.get(this.stream, this.durable);
        if (this.stopping) return;
        const messages = await consumer.consume({ max_messages: this.batchSize });
        this.messages = messages;
        if (this.stopping) {
          void messages.close();
          return;
        }
        for await (const m of messages) {
          if (this.stopping) {
            // Pulled but not started: hand it back now rather than after ack-wait.
            m.nak();
            continue;
          }
          await this.handle(m);
        }
      } catch (err) {
        if (this.stopping || this.nc.isClosed()) return;
        this.wiring.logger?.error(
          { stream: this.stream, durable: this.durable, err: errorMessage(err) },
          'bus consumer failed; restarting',
        );
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, RESTART_DELAY_MS);
          this.wakeUp = () => {
            clearTimeout(timer);
            resolve();
          };
        });
      }
    }
  }

  private async handle(m: JsMsg): Promise<void> {
    const headers = m.headers;
    await runHandler(
      {
        id: headers?.get(MSG_ID_HEADER) || `${this.stream}:${m.seq}`,
        subject: this.wiring.unwire(m.subject),
        data: m.data.slice(),
        headers: toRecord(headers),
        deliveryCount: m.info.deliveryCount,
      },
      {
        // Not ackAck: waiting for the server's confirmation cost a request (a reply, a timer)
        // per message. An ack that is lost brings the message again after ack-wait, and every
        // handler is idempotent on its message id (at-least-once delivery), so the
        // confirmation bought nothing.
        ack: async () => {
          m.ack();
        },
        nak: async (delayMs?: number) => {
          m.nak(delayMs);
          await this.nc.flush();
        },
        term: async () => {
          m.term();
          await this.nc.flush();
        },
      },
      this.wiring.handler,
      { stream: this.stream, durable: this.durable, logger: this.wiring.logger },
    );
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
