import { jetstreamManager, JetStreamApiCodes, JetStreamApiError } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { natsServers, type Bus, type BusMessage, type DeliveredMessage, type StreamSpec, type Subscription } from '@runline/bus';
import { TEST_SUBJECT } from './test-schema.js';

export const TEST_STREAM: StreamSpec = { name: 'DBTEST_EVENTS', subjects: ['dbtest.evt.>'], retention: 'limits' };

/** Deletes the prefixed streams a test created (JetStreamBus names them `<prefix>_<name>`). */
export async function deleteStreams(natsUrl: string, prefix: string, names: string[]): Promise<void> {
  const nc = await connect({ servers: natsServers(natsUrl) });
  try {
    const jsm = await jetstreamManager(nc);
    for (const name of names) {
      await jsm.streams.delete(`${prefix}_${name}`).catch((error: unknown) => {
        if (!(error instanceof JetStreamApiError && error.code === JetStreamApiCodes.StreamNotFound)) throw error;
      });
    }
  } finally {
    await nc.close();
  }
}

/** Messages a prefixed stream holds, as the server counts them. */
export async function streamMessageCount(natsUrl: string, prefix: string, name: string): Promise<number> {
  const nc = await connect({ servers: natsServers(natsUrl) });
  try {
    const jsm = await jetstreamManager(nc);
    return (await jsm.streams.info(`${prefix}_${name}`)).state.messages;
  } finally {
    await nc.close();
  }
}

/** A durable subscriber that records every delivery. */
export class DeliveryLog {
  readonly deliveries: Array<{ id: string; deliveryCount: number; at: number }> = [];
  readonly counts = new Map<string, number>();
  private subscription: Subscription | undefined;

  static async subscribe(
    bus: Bus,
    durable: string,
    handler: (message: DeliveredMessage) => Promise<void> = async () => undefined,
  ): Promise<DeliveryLog> {
    const log = new DeliveryLog();
    log.subscription = await bus.subscribe(
      { stream: TEST_STREAM.name, durable, filterSubject: `dbtest.evt.>`, ackWaitMs: 5_000, batchSize: 64 },
      async (message) => {
        log.deliveries.push({ id: message.id, deliveryCount: message.deliveryCount, at: Date.now() });
        log.counts.set(message.id, (log.counts.get(message.id) ?? 0) + 1);
        await handler(message);
      },
    );
    return log;
  }

  firstDeliveryAt(id: string): number | undefined {
    return this.deliveries.find((delivery) => delivery.id === id)?.at;
  }

  async stop(): Promise<void> {
    await this.subscription?.stop();
  }
}

/** A real bus seen through a window: counts every publish call per message id. */
export class CountingPublisher implements Pick<Bus, 'publish'> {
  /** Publish calls per id, counted when the call starts (attempts, successful or not). */
  readonly attempts = new Map<string, number>();
  /** Successful publishes per id. */
  readonly published = new Map<string, number>();
  readonly calls: Array<{ id: string; start: number; end: number }> = [];

  constructor(private readonly bus: Pick<Bus, 'publish'>) {}

  async publish(message: BusMessage): Promise<void> {
    const start = Date.now();
    this.attempts.set(message.id, (this.attempts.get(message.id) ?? 0) + 1);
    await this.bus.publish(message);
    this.calls.push({ id: message.id, start, end: Date.now() });
    this.published.set(message.id, (this.published.get(message.id) ?? 0) + 1);
  }
}

export async function waitUntil(condition: () => boolean | Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(20);
  }
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

export { TEST_SUBJECT };
