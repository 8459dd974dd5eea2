import type { DataSource, EntityManager } from 'typeorm';
import { JetStreamBus } from '@runline/bus';
import { createTestDatabase, testNatsUrl, uniqueBusPrefix, type TestDatabase } from '@runline/testing';
import { Inbox, OutboxRelay, TransactionRunner } from '../src/index.js';
import { DeliveryLog, deleteStreams, sleep, TEST_STREAM, waitUntil } from './support/bus-fixtures.js';
import { migratedDataSource, orderEvent } from './support/test-schema.js';

const SCHEMA = 'inboxtest';

async function increment(manager: EntityManager, name: string): Promise<void> {
  await manager.query(
    `INSERT INTO counters (name, value) VALUES ($1, 1) ON CONFLICT (name) DO UPDATE SET value = counters.value + 1`,
    [name],
  );
}

describe('inbox (real PostgreSQL and NATS JetStream)', () => {
  let db: TestDatabase;
  let dataSource: DataSource;

  beforeEach(async () => {
    db = await createTestDatabase();
    dataSource = await migratedDataSource(db.url, SCHEMA);
  });

  afterEach(async () => {
    await dataSource.destroy();
    await db.drop();
  });

  const counter = async (name: string): Promise<number> => {
    const rows = await dataSource.query<Array<{ value: number }>>(`SELECT value FROM ${SCHEMA}.counters WHERE name = $1`, [name]);
    return rows[0]?.value ?? 0;
  };

  it('runOnce says yes once per consumer and message, inside a transaction', async () => {
    const first = await dataSource.transaction((manager) => Inbox.runOnce(manager, 'projector', 'm-1'));
    const again = await dataSource.transaction((manager) => Inbox.runOnce(manager, 'projector', 'm-1'));
    const otherConsumer = await dataSource.transaction((manager) => Inbox.runOnce(manager, 'mailer', 'm-1'));
    const otherMessage = await dataSource.transaction((manager) => Inbox.runOnce(manager, 'projector', 'm-2'));

    expect([first, again, otherConsumer, otherMessage]).toEqual([true, false, true, true]);
    await expect(Inbox.runOnce(dataSource.manager, 'projector', 'm-3')).rejects.toThrow(/open transaction/);
  });

  it('forgets a message whose effect rolled back, so a redelivery applies it', async () => {
    await expect(
      Inbox.handleOnce(dataSource, 'counter', 'm-1', async ({ manager }) => {
        await increment(manager, 'c');
        throw new Error('effect failed half way');
      }),
    ).rejects.toThrow('effect failed half way');
    expect(await counter('c')).toBe(0);

    await expect(Inbox.handleOnce(dataSource, 'counter', 'm-1', ({ manager }) => increment(manager, 'c'))).resolves.toBe(true);
    await expect(Inbox.handleOnce(dataSource, 'counter', 'm-1', ({ manager }) => increment(manager, 'c'))).resolves.toBe(false);
    expect(await counter('c')).toBe(1);
  });

  it('lets one of several concurrent deliveries of a message apply it', async () => {
    // The first to insert the id keeps its transaction open until the two others wait for it
    // (their inserts of the same id), however long they take to get there.
    let release: () => void = () => undefined;
    const released = new Promise<void>((resolve) => (release = resolve));
    const deliver = (): Promise<boolean> =>
      Inbox.handleOnce(dataSource, 'counter', 'm-race', async ({ manager }) => {
        await released;
        await increment(manager, 'race');
      });

    const deliveries = Promise.all([deliver(), deliver(), deliver()]);
    await waitUntil(
      async () => {
        const [{ waiting }] = await dataSource.query<Array<{ waiting: number }>>(
          `SELECT count(*)::int AS waiting FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`,
        );
        return waiting >= 2;
      },
      10_000,
      'the two other deliveries to wait for the first',
    );
    release();
    const results = await deliveries;

    expect(results.filter(Boolean)).toHaveLength(1);
    expect(await counter('race')).toBe(1);
  });

  it('commits the inbox record, the effect and emitted messages together through a TransactionRunner', async () => {
    const runner = new TransactionRunner(dataSource, { notify: () => undefined });
    const handle = (): Promise<boolean> =>
      Inbox.handleOnce(runner, 'reactor', 'm-1', async (tx) => {
        await increment(tx.manager, 'reactions');
        tx.emit(orderEvent('reaction-to-m-1', 'o-1'));
      });

    await expect(handle()).resolves.toBe(true);
    await expect(handle()).resolves.toBe(false);

    expect(await counter('reactions')).toBe(1);
    const outbox = await dataSource.query<Array<{ id: string }>>(`SELECT id FROM ${SCHEMA}.outbox`);
    expect(outbox).toEqual([{ id: 'reaction-to-m-1' }]);
  });

  describe('with the bus redelivering', () => {
    let prefix: string;
    let bus: JetStreamBus;

    beforeEach(async () => {
      prefix = uniqueBusPrefix();
      bus = await JetStreamBus.connect({ url: testNatsUrl(), prefix, name: 'db-inbox-test' });
      await bus.ensureStreams([TEST_STREAM]);
    });

    afterEach(async () => {
      await bus.close();
      await deleteStreams(testNatsUrl(), prefix, [TEST_STREAM.name]);
    });

    it('d) changes the state once when the same event is delivered twice', async () => {
      const relay = new OutboxRelay(dataSource, bus, { sweepIntervalMs: 200 });
      relay.start();
      const runner = new TransactionRunner(dataSource, relay);
      const outcomes: Array<{ deliveryCount: number; applied: boolean }> = [];

      // The consumer applies the effect and then dies before acknowledging (it throws, so the
      // bus naks): the event comes again, and the inbox stops the effect the second time.
      const log = await DeliveryLog.subscribe(bus, 'inbox-consumer', async (message) => {
        const applied = await Inbox.handleOnce(runner, 'order-counter', message.id, ({ manager }) => increment(manager, 'orders'));
        outcomes.push({ deliveryCount: message.deliveryCount, applied });
        if (message.deliveryCount === 1) throw new Error('crashed before ack');
      });
      try {
        await runner.run(async (tx) => tx.emit(orderEvent('evt-once', 'o-1')));

        await waitUntil(() => outcomes.length >= 2, 10_000, 'the redelivery');
        await sleep(300);
        expect(outcomes).toEqual([
          { deliveryCount: 1, applied: true },
          { deliveryCount: 2, applied: false },
        ]);
        expect(log.counts.get('evt-once')).toBe(2);
        expect(await counter('orders')).toBe(1);
      } finally {
        await log.stop();
        await relay.stop();
      }
    });
  });
});
