import { Logger } from '@nestjs/common';
import { Server, type CustomTransportStrategy } from '@nestjs/microservices';
import { isObservable, lastValueFrom } from 'rxjs';
import { trace, SpanStatusCode } from '@opentelemetry/api';
import { errorMessage } from './bus-logger.js';
import { inMessageSpan, receivedContext } from './bus-tracing.js';
import { BusContext } from './bus.context.js';
import type { Bus, DeliveredMessage, DurableSubscriptionSpec, StreamSpec, Subscription } from './bus.js';
import { assertName, assertSubject, subjectCovers } from './subject-rules.js';
import { redeliveryDelay } from './settlement.js';

/** Injection token under which a service provides its `Bus` instance. */
export const BUS = 'RUNLINE_BUS';

/** Transport id of `BusServer`, for `@EventPattern(subject, BUS_TRANSPORT)` in a multi-transport app. */
export const BUS_TRANSPORT: unique symbol = Symbol('RUNLINE_BUS_TRANSPORT');

/** Turns message bytes into handler input and handler results into reply bytes. */
export interface BusCodec {
  /** Throws on bytes it cannot read; an event that cannot be decoded is terminated. */
  decode(data: Uint8Array): unknown;
  encode(value: unknown): Uint8Array;
}

export interface BusServerOptions {
  bus: Bus;
  /** Service name: durable consumer prefix and queue group. Letters, digits, `-`, `_`. */
  service: string;
  /** Streams to ensure at start; each event pattern must fall within exactly one of them. */
  streams: StreamSpec[];
  /**
   * Decodes events (for example into envelopes) before their handler sees them. Requests and
   * replies are always raw bytes: each request subject carries its own message type, which
   * its handler decodes. Without a codec event handlers get raw `Uint8Array`s too.
   */
  eventCodec?: BusCodec;
  /** Wait before a failed event is redelivered: doubles per attempt from this, up to 30 s. Default 250 ms. */
  retryBaseDelayMs?: number;
  /** Applied to every durable subscription this server creates. */
  subscription?: Partial<Pick<DurableSubscriptionSpec, 'maxDeliver' | 'ackWaitMs' | 'batchSize'>>;
}

/**
 * The durable consumer name `BusServer` gives an event handler of `service` on `subject`:
 * `<service>-<subject tokens joined by "-">`, a `*` token written `any` and `>` written `all`
 * (names cannot hold wildcards). Renaming a service or a subject therefore starts a new consumer.
 */
export function busDurableName(service: string, subject: string): string {
  const tokens = subject.split('.').map((token) => (token === '*' ? 'any' : token === '>' ? 'all' : token));
  return `${service}-${tokens.join('-')}`;
}

/**
 * Nest custom transport over a `Bus`:
 * - `@EventPattern('<logical subject>')` becomes a durable subscription (name from
 *   `busDurableName`) on the stream whose subjects cover the pattern. A handler that returns
 *   acks the message; one that throws naks it (redelivery, up to `maxDeliver`).
 * - `@MessagePattern('<logical subject>')` becomes `bus.reply(subject, service, …)`. The
 *   handler's result is the reply; a thrown error becomes `BusRemoteError` on the requester
 *   with the message Nest's RPC exception filter gives it (the `RpcException` error, or
 *   "Internal server error" for anything else).
 *
 * `close()` stops the subscriptions, letting handlers in progress finish; the bus itself
 * belongs to whoever created it and stays open.
 */
export class BusServer extends Server implements CustomTransportStrategy {
  override transportId = BUS_TRANSPORT;
  // We await an event handler's result ourselves, nak on failure and log it, so Nest need not
  // report an unfiltered RpcException from an event handler a second time.
  override readonly propagatesEventHandlerErrors = true;
  protected override readonly logger = new Logger(BusServer.name);
  private subscriptions: Subscription[] = [];

  constructor(private readonly options: BusServerOptions) {
    super();
    assertName('service name', options.service);
  }

  async listen(callback: (...optionalParams: unknown[]) => unknown): Promise<void> {
    try {
      await this.start();
    } catch (err) {
      await this.close();
      callback(err);
      return;
    }
    callback();
  }

  async close(): Promise<void> {
    const subscriptions = this.subscriptions;
    this.subscriptions = [];
    await Promise.all(subscriptions.map((subscription) => subscription.stop()));
  }

  on(): never {
    throw new Error('BusServer emits no events');
  }

  unwrap<T>(): T {
    return this.options.bus as T;
  }

  private async start(): Promise<void> {
    const { bus, service, streams } = this.options;
    await bus.ensureStreams(streams);
    for (const [pattern, handler] of this.messageHandlers) {
      assertSubject(pattern, true);
      if (handler.isEventHandler) {
        const stream = this.streamFor(pattern);
        const subscription = await bus.subscribe(
          {
            ...this.options.subscription,
            stream: stream.name,
            durable: busDurableName(service, pattern),
            filterSubject: pattern,
          },
          (message) => this.onEvent(pattern, message),
        );
        this.subscriptions.push(subscription);
      } else {
        this.subscriptions.push(await bus.reply(pattern, service, (data, headers) => this.onRequest(pattern, data, headers)));
      }
    }
  }

  private streamFor(pattern: string): StreamSpec {
    const matches = this.options.streams.filter((stream) =>
      stream.subjects.some((subject) => subjectCovers(subject, pattern)),
    );
    if (matches.length !== 1) {
      const found = matches.length === 0 ? 'none' : matches.map((stream) => stream.name).join(', ');
      throw new Error(`event pattern ${pattern} must fall within exactly one stream; found ${found}`);
    }
    return matches[0];
  }

  private async onEvent(pattern: string, message: DeliveredMessage): Promise<void> {
    const handler = this.messageHandlers.get(pattern);
    if (!handler) throw new Error(`no handler for ${pattern}`);
    let input: unknown;
    try {
      input = this.options.eventCodec ? this.options.eventCodec.decode(message.data) : message.data;
    } catch (err) {
      // Redelivering bytes that cannot be read would fail the same way every time.
      this.logger.error(`terminating undecodable message ${message.id} on ${message.subject}: ${errorMessage(err)}`);
      await message.term();
      return;
    }
    const context = new BusContext([message.subject, message.headers ?? {}, message]);
    const parent = receivedContext(message.headers ?? {}, traceparentOf(input));
    const span = { service: this.options.service, subject: message.subject, kind: 'event' as const, messageId: message.id };
    await inMessageSpan(parent, span, async () => {
      try {
        await this.withProcessingHooks(context, async () => {
          const result: unknown = await handler(input, context);
          if (isObservable(result)) await lastValueFrom(result, { defaultValue: undefined });
        });
      } catch (err) {
        trace.getActiveSpan()?.setStatus({ code: SpanStatusCode.ERROR, message: errorMessage(err) });
        this.logger.warn(
          `handler of ${message.subject} failed on message ${message.id} (delivery ${message.deliveryCount}): ${errorMessage(err)}`,
        );
        // Backing off keeps a passing outage (a database restart) from using up every delivery at once.
        await message.nak(redeliveryDelay(message.deliveryCount, this.options.retryBaseDelayMs));
      }
    });
  }

  private async onRequest(pattern: string, data: Uint8Array, headers: Record<string, string>): Promise<Uint8Array> {
    const handler = this.messageHandlers.get(pattern);
    if (!handler) throw new Error(`no handler for ${pattern}`);
    const context = new BusContext([pattern, headers, undefined]);
    let value: unknown;
    await inMessageSpan(receivedContext(headers, undefined), { service: this.options.service, subject: pattern, kind: 'request' }, () =>
      this.withProcessingHooks(context, async () => {
        value = await lastValueFrom(this.transformToObservable(await handler(data, context)), {
          defaultValue: undefined,
        });
      }),
    );
    return this.encode(value);
  }

  /** Runs `work` between Nest's processing hooks and settles with `work`'s own outcome. */
  private withProcessingHooks(context: BusContext, work: () => Promise<void>): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      try {
        this.runWithProcessingHooks(context, async (runEndHook) => {
          try {
            await work();
            resolve();
          } catch (err) {
            // Reported through our promise only: rethrowing here would surface unhandled.
            reject(rejection(err));
          } finally {
            runEndHook();
          }
        });
      } catch (err) {
        reject(rejection(err));
      }
    });
  }

  private encode(value: unknown): Uint8Array {
    if (value instanceof Uint8Array) return value;
    if (value === undefined) return new Uint8Array();
    throw new Error('a message handler must return a Uint8Array (its reply, encoded)');
  }
}

/** An envelope's `traceparent` field (what the codec decoded), for a message that came without the header. */
function traceparentOf(input: unknown): string | undefined {
  const field = typeof input === 'object' && input !== null ? (input as { traceparent?: unknown }).traceparent : undefined;
  return typeof field === 'string' && field !== '' ? field : undefined;
}

// Nest's RPC exception filter rejects with plain `{ status, message }` objects.
const rejection = (err: unknown): Error => (err instanceof Error ? err : new Error(errorMessage(err)));
