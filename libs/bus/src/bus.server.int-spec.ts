import { Controller, Inject, Module, type INestMicroservice } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Ctx, EventPattern, MessagePattern, Payload, RpcException } from '@nestjs/microservices';
import {
  BUS,
  BusContext,
  BusRemoteError,
  BusServer,
  InProcessBus,
  JetStreamBus,
  busDurableName,
  type Bus,
  type BusCodec,
  type StreamSpec,
} from '@runline/bus';
import { deletePrefixedStreams, testNatsUrl, uniqueBusPrefix } from '@runline/testing';

const STREAMS: StreamSpec[] = [{ name: 'ORDERS_EVENTS', subjects: ['orders.evt.>'], retention: 'limits' }];

const json: BusCodec = {
  decode: (data) => JSON.parse(new TextDecoder().decode(data)) as unknown,
  encode: (value) => new TextEncoder().encode(JSON.stringify(value)),
};

interface OrderPlaced {
  orderId: string;
  failFirst?: boolean;
}

interface Handled {
  orderId: string;
  id: string;
  subject: string;
  deliveryCount: number;
  tenant: string | undefined;
}

/** What the handlers saw, shared with the test through the container. */
class Probe {
  readonly handled: Handled[] = [];
}
const PROBE = 'PROBE';

@Controller()
class OrdersController {
  constructor(
    @Inject(PROBE) private readonly probe: Probe,
    @Inject(BUS) private readonly bus: Bus,
  ) {}

  // The explicit type argument picks the untyped overload, so the handler may take a context.
  @EventPattern<string>('orders.evt.placed')
  async placed(@Payload() event: OrderPlaced, @Ctx() context: BusContext): Promise<void> {
    const message = context.getMessage();
    this.probe.handled.push({
      orderId: event.orderId,
      id: message.id,
      subject: context.getSubject(),
      deliveryCount: message.deliveryCount,
      tenant: context.getHeaders()['x-tenant'],
    });
    if (event.failFirst && message.deliveryCount === 1) throw new Error('database unavailable');
  }

  @MessagePattern('orders.req.get')
  async get(@Payload() data: Uint8Array, @Ctx() context: BusContext): Promise<Uint8Array> {
    // Requests are raw bytes: each request subject decodes its own message type.
    const query = json.decode(data) as { orderId: string };
    if (query.orderId === 'missing') throw new RpcException(`order ${query.orderId} not found`);
    if (query.orderId === 'bug') throw new Error('secret internals');
    await this.bus.ping();
    return json.encode({ orderId: query.orderId, status: 'placed', caller: context.getHeaders()['x-caller'], event: context.isEvent() });
  }
}

interface Harness {
  bus: Bus;
  probe: Probe;
  app: INestMicroservice;
  dispose(): Promise<void>;
}

async function startApp(bus: Bus): Promise<{ app: INestMicroservice; probe: Probe }> {
  const probe = new Probe();
  @Module({
    controllers: [OrdersController],
    providers: [
      { provide: PROBE, useValue: probe },
      { provide: BUS, useValue: bus },
    ],
  })
  class OrdersModule {}
  const app = await NestFactory.createMicroservice(OrdersModule, {
    strategy: new BusServer({
      bus,
      service: 'orders',
      streams: STREAMS,
      eventCodec: json,
      retryBaseDelayMs: 10,
      subscription: { ackWaitMs: 500, maxDeliver: 5 },
    }),
    logger: false,
  });
  await app.listen();
  return { app, probe };
}

const transports: [string, () => Promise<{ bus: Bus; cleanup: () => Promise<void> }>][] = [
  ['InProcessBus', async () => ({ bus: new InProcessBus(), cleanup: async () => {} })],
  [
    'JetStreamBus',
    async () => {
      const prefix = uniqueBusPrefix();
      return {
        bus: await JetStreamBus.connect({ url: testNatsUrl(), prefix, name: 'bus-server-test' }),
        cleanup: () => deletePrefixedStreams(testNatsUrl(), prefix),
      };
    },
  ],
];

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

async function until(what: string, condition: () => boolean, timeoutMs = 5_000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!condition()) {
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(10);
  }
}

describe.each(transports)('BusServer on %s', (_name, connect) => {
  let harness: Harness;

  beforeEach(async () => {
    const { bus, cleanup } = await connect();
    const { app, probe } = await startApp(bus);
    harness = {
      bus,
      probe,
      app,
      dispose: async () => {
        await app.close();
        await bus.close();
        await cleanup();
      },
    };
  });

  afterEach(() => harness.dispose());

  const publishOrder = (id: string, event: OrderPlaced, headers?: Record<string, string>) =>
    harness.bus.publish({ id, subject: 'orders.evt.placed', data: json.encode(event), headers });

  it('hands a decoded event and its context to an @EventPattern handler', async () => {
    await publishOrder('evt-1', { orderId: 'o-1' }, { 'x-tenant': 'acme' });
    await until('the event', () => harness.probe.handled.length === 1);
    expect(harness.probe.handled[0]).toEqual({
      orderId: 'o-1',
      id: 'evt-1',
      subject: 'orders.evt.placed',
      deliveryCount: 1,
      tenant: 'acme',
    });
  });

  it('redelivers an event whose handler threw', async () => {
    await publishOrder('evt-2', { orderId: 'o-2', failFirst: true });
    await until('the redelivery', () => harness.probe.handled.length === 2);
    expect(harness.probe.handled.map((h) => [h.id, h.deliveryCount])).toEqual([
      ['evt-2', 1],
      ['evt-2', 2],
    ]);
    await sleep(700);
    expect(harness.probe.handled).toHaveLength(2);
  });

  it('terminates an event it cannot decode instead of redelivering it', async () => {
    await harness.bus.publish({ id: 'evt-bad', subject: 'orders.evt.placed', data: new TextEncoder().encode('{not json') });
    await publishOrder('evt-after', { orderId: 'o-after' });
    await until('the next event', () => harness.probe.handled.length === 1);
    await sleep(700);
    expect(harness.probe.handled.map((h) => h.id)).toEqual(['evt-after']);
  });

  it('answers a request through a @MessagePattern handler', async () => {
    const reply = await harness.bus.request('orders.req.get', json.encode({ orderId: 'o-3' }), {
      timeoutMs: 2_000,
      headers: { 'x-caller': 'gateway' },
    });
    expect(json.decode(reply)).toEqual({ orderId: 'o-3', status: 'placed', caller: 'gateway', event: false });
  });

  it('turns a thrown RpcException into BusRemoteError with its message, and hides other errors', async () => {
    const missing = await harness.bus
      .request('orders.req.get', json.encode({ orderId: 'missing' }), { timeoutMs: 2_000 })
      .catch((err: unknown) => err);
    expect(missing).toBeInstanceOf(BusRemoteError);
    expect(missing).toMatchObject({ message: 'order missing not found' });
    const bug = await harness.bus
      .request('orders.req.get', json.encode({ orderId: 'bug' }), { timeoutMs: 2_000 })
      .catch((err: unknown) => err);
    expect(bug).toBeInstanceOf(BusRemoteError);
    expect((bug as Error).message).not.toContain('secret');
  });

  it('uses a durable named after the service and subject, kept across restarts', async () => {
    expect(busDurableName('orders', 'orders.evt.placed')).toBe('orders-orders-evt-placed');
    await publishOrder('evt-4', { orderId: 'o-4' });
    await until('the event', () => harness.probe.handled.length === 1);
    await harness.app.close();
    await publishOrder('evt-5', { orderId: 'o-5' });
    const restarted = await startApp(harness.bus);
    harness.app = restarted.app;
    await until('the event published while stopped', () => restarted.probe.handled.length === 1);
    await sleep(200);
    expect(restarted.probe.handled.map((h) => h.id)).toEqual(['evt-5']);
  });

  it('close() stops the handlers but leaves the bus open', async () => {
    await harness.app.close();
    await expect(harness.bus.ping()).resolves.toBeUndefined();
    await expect(
      harness.bus.request('orders.req.get', json.encode({ orderId: 'o-6' }), { timeoutMs: 500 }),
    ).rejects.toThrow(/no responders/);
  });
});

describe('BusServer configuration', () => {
  it('refuses to listen when an event pattern falls within no stream', async () => {
    @Controller()
    class StrayController {
      @EventPattern<string>('stray.evt.x')
      async stray(): Promise<void> {}
    }
    @Module({ controllers: [StrayController] })
    class StrayModule {}
    const bus = new InProcessBus();
    const app = await NestFactory.createMicroservice(StrayModule, {
      strategy: new BusServer({ bus, service: 'stray', streams: STREAMS }),
      logger: false,
    });
    await expect(app.listen()).rejects.toThrow(/exactly one stream/);
    await app.close();
    await bus.close();
  });

  it('passes raw bytes without a codec', async () => {
    @Controller()
    class RawController {
      @MessagePattern('raw.req.reverse')
      async reverse(@Payload() data: Uint8Array): Promise<Uint8Array> {
        return Uint8Array.from(data).reverse();
      }
    }
    @Module({ controllers: [RawController] })
    class RawModule {}
    const bus = new InProcessBus();
    const app = await NestFactory.createMicroservice(RawModule, {
      strategy: new BusServer({ bus, service: 'raw', streams: [] }),
      logger: false,
    });
    await app.listen();
    const reply = await bus.request('raw.req.reverse', Uint8Array.of(1, 2, 3), { timeoutMs: 1_000 });
    expect([...reply]).toEqual([3, 2, 1]);
    await app.close();
    await bus.close();
  });
});
