import type { Consumer, ConsumerMessages, JsMsg } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import type { BusLogger } from './bus-logger.js';
import { errorMessage } from './bus-logger.js';
import type { MessageHandler, Subscription } from './bus.js';
import { MSG_ID_HEADER, toRecord } from './nats-headers.js';
import { PulledMessages } from './pulled-messages.js';
import { runHandler } from './settlement.js';

const RESTART_DELAY_MS = 1_000;
/**
 * While a pull waits, the server sends a heartbeat this often; two missed in a row and the
 * subscriber pulls again. A consumer's leader that dies (its NATS node killed) takes the pending
 * pull with it, and the new leader knows nothing of it: without this the subscriber waited for
 * two heartbeats of the default (half the 30 s pull expiry), 30 s and more, while the stream
 * itself had a new leader within seconds.
 */
const PULL_HEARTBEAT_MS = 1_000;

/** What a subscription needs from the bus that made it. */
export interface SubscriptionWiring {
  handler: MessageHandler;
  unwire: (subject: string) => string;
  logger: BusLogger | undefined;
  onStopped: () => void;
  /** The durable consumer, made again when the server no longer has it (deleted, or lost with a node's store). */
  consumer: () => Promise<Consumer>;
  /** False only when the server says the consumer does not exist (not when it cannot tell). */
  exists: () => Promise<boolean>;
}

/**
 * One subscriber of a durable pull consumer: pulls at most `batchSize` messages at a time and
 * handles them one at a time. The next pull goes out when a quarter of the batch is left, so
 * the handler rarely waits for the network, and never more than a batch waits here: the rest
 * of a backlog stays on the server, for any replica to take (`consume()` of nats.js pulls again
 * as messages arrive, however far the handler is behind, so one replica took a whole backlog
 * into memory and let it pass its ack wait).
 */
export class JetStreamSubscription implements Subscription {
  private pull: ConsumerMessages | undefined;
  private pulled: PulledMessages | undefined;
  private stopping = false;
  /** The server said the consumer does not exist: get it (made again) before pulling on. */
  private gone = false;
  private checking = false;
  private loop: Promise<void> = Promise.resolve();
  private wakeUp: (() => void) | undefined;

  constructor(
    private readonly nc: NatsConnection,
    private readonly stream: string,
    private readonly durable: string,
    private readonly batchSize: number,
    private readonly ackWaitMs: number,
    private readonly wiring: SubscriptionWiring,
  ) {}

  start(): void {
    this.loop = this.run();
  }

  async stop(): Promise<void> {
    if (!this.stopping) {
      this.stopping = true;
      this.wiring.onStopped();
      // Closing the pull from here, not from inside its loop, is what lets the loop end.
      void this.pull?.close();
      // Pulled but not started: hand them back now rather than after ack-wait.
      this.pulled?.handBack();
      this.pulled?.end();
      this.wakeUp?.();
    }
    await this.loop;
  }

  private async run(): Promise<void> {
    while (!this.stopping && !this.nc.isClosed()) {
      // A slow handler ends the pull under way, so it takes no redelivery of its own message.
      const pulled = new PulledMessages(this.ackWaitMs, () => void this.pull?.close());
      this.pulled = pulled;
      const handling = this.handleEach(pulled);
      try {
        const consumer = await this.wiring.consumer();
        this.gone = false;
        await this.pullInto(consumer, pulled);
      } catch (err) {
        if (!this.stopping && !this.nc.isClosed()) {
          this.wiring.logger?.error({ stream: this.stream, durable: this.durable, err: errorMessage(err) }, 'bus consumer failed; restarting');
        }
      }
      pulled.end();
      // One message at a time: what was pulled is handled before the next consumer is asked.
      await handling;
      if (this.stopping || this.nc.isClosed()) return;
      if (!this.gone) await this.pause(RESTART_DELAY_MS);
    }
  }

  private async handleEach(pulled: PulledMessages): Promise<void> {
    for (let message = await pulled.next(); message !== undefined; message = await pulled.next()) {
      if (this.stopping) message.nak();
      else await this.handle(message);
    }
  }

  /** Pulls into `pulled` until the subscription stops or the consumer is gone. */
  private async pullInto(consumer: Consumer, pulled: PulledMessages): Promise<void> {
    const refillAt = Math.floor(this.batchSize / 4);
    while (!this.stopping && !this.gone) {
      await pulled.atMost(refillAt);
      if (this.stopping) return;
      // `bind`: a pull that goes unanswered (two heartbeats missed, or a reconnect) is simply
      // made again, without first asking for the consumer's info, which waits up to 5 s and
      // then backs off while the consumer has no leader.
      const pull = await consumer.fetch({ max_messages: this.batchSize - pulled.length, idle_heartbeat: PULL_HEARTBEAT_MS, bind: true });
      this.pull = pull;
      if (this.stopping) {
        void pull.close();
        return;
      }
      void this.watch(pull).catch(() => undefined);
      const started = Date.now();
      try {
        for await (const message of pull) {
          if (this.stopping) message.nak();
          else pulled.push(message);
        }
      } catch (err) {
        // Heartbeats missed (a leader that died took the pull with it) or the consumer deleted:
        // pull again at once; `watch` has asked whether the consumer still exists. A pull
        // refused at once would otherwise be made again in a tight loop.
        if (Date.now() - started < PULL_HEARTBEAT_MS) {
          this.wiring.logger?.warn({ stream: this.stream, durable: this.durable, err: errorMessage(err) }, 'bus pull refused; pulling again');
          await this.pause(RESTART_DELAY_MS);
        }
      }
    }
  }

  /** Marks the consumer gone, and ends the pull, when the server says it was deleted or no longer knows it. */
  private async watch(pull: ConsumerMessages): Promise<void> {
    for await (const status of pull.status()) {
      if (this.stopping) return;
      if (status.type === 'consumer_deleted') {
        this.markGone();
        return;
      }
      if (status.type !== 'heartbeats_missed' || this.checking) continue;
      this.checking = true;
      void this.wiring
        .exists()
        .then((exists) => {
          if (!exists && !this.stopping) this.markGone();
        })
        .finally(() => {
          this.checking = false;
        });
    }
  }

  private markGone(): void {
    this.gone = true;
    void this.pull?.close();
  }

  private pause(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.wakeUp = () => {
        clearTimeout(timer);
        resolve();
      };
    });
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
