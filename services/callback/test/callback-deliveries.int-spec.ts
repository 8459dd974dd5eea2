import { randomUUID } from 'node:crypto';
import type { DataSource, EntityManager } from 'typeorm';
import { createServiceDataSource } from '@runline/db';
import { migrateServices } from '@runline/runtime';
import { createTestDatabase, type TestDatabase } from '@runline/testing';
import { callbackService } from '../src/callback.service.js';
import {
  claimDelivery,
  claimDueDeliveries,
  dueSoon,
  insertDeliveries,
  recordAttempts,
  type AttemptRecord,
  type NewDelivery,
} from '../src/deliveries/callback-deliveries.repository.js';

const T = new Date('2030-01-01T00:00:00.000Z').getTime();
const at = (offsetMs: number) => new Date(T + offsetMs);

/** The callback deliveries repository on a real PostgreSQL: each statement, its guards and races. */
describe('callback deliveries repository', () => {
  let database: TestDatabase;
  let dataSource: DataSource;

  const delivery = (overrides: Partial<NewDelivery> = {}): NewDelivery => ({
    id: randomUUID(),
    invocationId: randomUUID(),
    orgId: randomUUID(),
    projectId: randomUUID(),
    url: 'https://receiver.example/hook',
    sealedSecret: 'sealed-secret',
    body: Buffer.from('{"invocationId":"i","status":"SUCCEEDED"}'),
    runStatus: 'SUCCEEDED',
    correlationId: 'corr-1',
    traceparent: null,
    ...overrides,
  });

  const record = (deliveryId: string, attempt: number, overrides: Partial<AttemptRecord> = {}): AttemptRecord => ({
    deliveryId,
    attempt,
    attemptedAt: at(attempt * 1000),
    durationMs: 12,
    outcome: 'HTTP_ERROR',
    statusCode: 500,
    error: 'receiver answered 500',
    status: 'PENDING',
    nextAttemptAt: at(attempt * 1000 + 500),
    ...overrides,
  });

  /** Inserts deliveries whose next attempt is due at `dueAt` (as a lease that ran out then). */
  const insertDue = (items: NewDelivery[], dueAt: Date) => dataSource.transaction((manager) => insertDeliveries(manager, items, at(-60_000), dueAt));
  const inTransaction = <T>(work: (manager: EntityManager) => Promise<T>) => dataSource.transaction(work);
  const row = async (id: string) =>
    (await dataSource.query(`SELECT status, attempts_made, next_attempt_at, updated_at, completed_at FROM callback_deliveries WHERE id = $1`, [id]))[0] as
      | { status: string; attempts_made: number; next_attempt_at: Date | null; updated_at: Date; completed_at: Date | null }
      | undefined;
  const attempts = async (id: string) =>
    (await dataSource.query(`SELECT attempt, outcome, status_code, error, duration_ms FROM callback_attempts WHERE delivery_id = $1 ORDER BY attempt`, [id])) as Array<{
      attempt: number;
      outcome: string;
      status_code: number | null;
      error: string | null;
      duration_ms: number;
    }>;

  beforeAll(async () => {
    database = await createTestDatabase();
    await migrateServices([callbackService], database.url);
    dataSource = createServiceDataSource({ url: database.url, schema: 'callback', migrations: [] });
    await dataSource.initialize();
  });
  beforeEach(async () => {
    await dataSource.query('DELETE FROM callback_attempts');
    await dataSource.query('DELETE FROM callback_deliveries');
  });
  afterAll(async () => {
    await dataSource?.destroy();
    await database?.drop();
  });

  describe('insertDeliveries', () => {
    it('inserts new deliveries already claimed until the lease ends, keeping the exact body bytes', async () => {
      const body = Buffer.from([0x7b, 0x22, 0xe2, 0x82, 0xac, 0x22, 0x3a, 0x20, 0x31, 0x7d, 0x00, 0xff]);
      const signed = delivery({ body });
      const unsigned = delivery({ sealedSecret: null, correlationId: null, traceparent: '00-abc-def-01' });
      const inserted = await inTransaction((manager) => insertDeliveries(manager, [signed, unsigned], at(0), at(30_000)));
      expect(inserted).toEqual(new Set([signed.id, unsigned.id]));

      const [stored] = await dataSource.query(`SELECT * FROM callback_deliveries WHERE id = $1`, [signed.id]);
      expect(stored).toMatchObject({
        invocation_id: signed.invocationId,
        org_id: signed.orgId,
        project_id: signed.projectId,
        url: signed.url,
        sealed_secret: 'sealed-secret',
        run_status: 'SUCCEEDED',
        correlation_id: 'corr-1',
        traceparent: null,
        status: 'PENDING',
        attempts_made: 0,
        next_attempt_at: at(30_000),
        created_at: at(0),
        updated_at: at(0),
        completed_at: null,
      });
      expect(Buffer.compare(stored.body as Buffer, body)).toBe(0);
      expect((await dataSource.query(`SELECT sealed_secret, correlation_id, traceparent FROM callback_deliveries WHERE id = $1`, [unsigned.id]))[0]).toEqual({
        sealed_secret: null,
        correlation_id: null,
        traceparent: '00-abc-def-01',
      });
    });

    it('a delivery whose id or run is known is not inserted again (a redelivered command)', async () => {
      const first = delivery();
      await insertDue([first], at(0));
      const sameId = { ...delivery(), id: first.id };
      const sameRun = delivery({ invocationId: first.invocationId });
      const fresh = delivery();
      const inserted = await inTransaction((manager) => insertDeliveries(manager, [sameId, sameRun, fresh], at(1000), at(31_000)));
      expect(inserted).toEqual(new Set([fresh.id]));
      expect(Number((await dataSource.query(`SELECT count(*) AS n FROM callback_deliveries`))[0].n)).toBe(2);
      // The known one is left as it was.
      expect((await row(first.id))?.next_attempt_at).toEqual(at(0));
    });

    it('twice the same delivery in one batch inserts it once', async () => {
      const one = delivery();
      const inserted = await inTransaction((manager) => insertDeliveries(manager, [one, { ...one }], at(0), at(30_000)));
      expect(inserted).toEqual(new Set([one.id]));
      expect(Number((await dataSource.query(`SELECT count(*) AS n FROM callback_deliveries`))[0].n)).toBe(1);
    });

    it('an empty batch inserts nothing', async () => {
      expect(await inTransaction((manager) => insertDeliveries(manager, [], at(0), at(30_000)))).toEqual(new Set());
    });
  });

  describe('claimDueDeliveries', () => {
    it('claims PENDING deliveries due by now, earliest first up to the limit, and moves them to the lease end', async () => {
      const [early, middle, late, notYet] = [delivery(), delivery(), delivery(), delivery()];
      await insertDue([late], at(-1000));
      await insertDue([early], at(-3000));
      await insertDue([middle], at(-2000));
      await insertDue([notYet], at(1));

      const claimed = await inTransaction((manager) => claimDueDeliveries(manager, at(0), at(30_000), 2));
      expect(claimed.map((d) => d.id).sort()).toEqual([early.id, middle.id].sort());
      expect((await row(early.id))?.next_attempt_at).toEqual(at(30_000));
      expect((await row(early.id))?.updated_at).toEqual(at(0));
      expect((await row(late.id))?.next_attempt_at).toEqual(at(-1000));
      expect((await row(notYet.id))?.next_attempt_at).toEqual(at(1));

      const again = await inTransaction((manager) => claimDueDeliveries(manager, at(0), at(30_000), 10));
      expect(again.map((d) => d.id)).toEqual([late.id]);
      // Everything due is leased now: a repeated sweep claims nothing.
      expect(await inTransaction((manager) => claimDueDeliveries(manager, at(0), at(30_000), 10))).toEqual([]);
    });

    it('answers the delivery as sent, with the attempts made so far', async () => {
      const one = delivery({ traceparent: '00-trace-01' });
      await insertDue([one], at(-1));
      await inTransaction((manager) => recordAttempts(manager, [record(one.id, 1, { nextAttemptAt: at(-1) })], at(0)));
      const [claimed] = await inTransaction((manager) => claimDueDeliveries(manager, at(0), at(30_000), 10));
      expect(claimed).toEqual({ ...one, body: Buffer.from(one.body), attemptsMade: 1 });
    });

    it('never claims ended deliveries', async () => {
      const [delivered, failed] = [delivery(), delivery()];
      await insertDue([delivered, failed], at(-5000));
      await inTransaction((manager) =>
        recordAttempts(
          manager,
          [
            record(delivered.id, 1, { outcome: 'ACKNOWLEDGED', statusCode: 200, error: null, status: 'DELIVERED', nextAttemptAt: null }),
            record(failed.id, 1, { status: 'FAILED', nextAttemptAt: null }),
          ],
          at(-4000),
        ),
      );
      expect(await inTransaction((manager) => claimDueDeliveries(manager, at(0), at(30_000), 10))).toEqual([]);
    });

    it('skips the rows another replica is claiming instead of waiting for them (SKIP LOCKED)', async () => {
      const items = [delivery(), delivery(), delivery(), delivery()];
      for (const [index, item] of items.entries()) await insertDue([item], at(-4000 + index * 1000));
      const holder = dataSource.createQueryRunner();
      await holder.connect();
      try {
        await holder.startTransaction();
        const first = await claimDueDeliveries(holder.manager, at(0), at(30_000), 2);
        expect(first.map((d) => d.id).sort()).toEqual([items[0]!.id, items[1]!.id].sort());
        // Waiting on a locked row would fail this statement instead of answering.
        const second = await inTransaction(async (manager) => {
          await manager.query(`SET LOCAL lock_timeout = '2s'`);
          return claimDueDeliveries(manager, at(0), at(30_000), 10);
        });
        expect(second.map((d) => d.id).sort()).toEqual([items[2]!.id, items[3]!.id].sort());
        await holder.commitTransaction();
      } finally {
        await holder.release();
      }
      expect(await inTransaction((manager) => claimDueDeliveries(manager, at(0), at(30_000), 10))).toEqual([]);
    });
  });

  describe('claimDelivery', () => {
    it('claims one delivery when its attempt is due, once', async () => {
      const one = delivery();
      await insertDue([one], at(0));
      expect(await inTransaction((manager) => claimDelivery(manager, one.id, at(-1), at(30_000)))).toBeNull();
      const claimed = await inTransaction((manager) => claimDelivery(manager, one.id, at(0), at(30_000)));
      expect(claimed).toEqual({ ...one, body: Buffer.from(one.body), attemptsMade: 0 });
      expect((await row(one.id))?.next_attempt_at).toEqual(at(30_000));
      // A repeated timer finds it leased.
      expect(await inTransaction((manager) => claimDelivery(manager, one.id, at(1), at(30_001)))).toBeNull();
    });

    it('claims nothing for an unknown or ended delivery', async () => {
      const one = delivery();
      await insertDue([one], at(-1000));
      await inTransaction((manager) => recordAttempts(manager, [record(one.id, 1, { status: 'FAILED', nextAttemptAt: null })], at(-500)));
      expect(await inTransaction((manager) => claimDelivery(manager, one.id, at(0), at(30_000)))).toBeNull();
      expect(await inTransaction((manager) => claimDelivery(manager, randomUUID(), at(0), at(30_000)))).toBeNull();
    });

    it('of two replicas claiming at once, one gets it', async () => {
      const one = delivery();
      await insertDue([one], at(0));
      const holder = dataSource.createQueryRunner();
      await holder.connect();
      try {
        await holder.startTransaction();
        expect(await claimDelivery(holder.manager, one.id, at(0), at(30_000))).not.toBeNull();
        // The other waits for the row, then sees the lease (committed once it is seen waiting).
        const other = inTransaction((manager) => claimDelivery(manager, one.id, at(0), at(30_000)));
        for (let waited = 0; ; waited += 20) {
          const [{ waiting }] = await dataSource.query<Array<{ waiting: number }>>(
            `SELECT count(*)::int AS waiting FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`,
          );
          if (waiting >= 1) break;
          if (waited > 10_000) throw new Error('the other claim never waited for the row');
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
        await holder.commitTransaction();
        expect(await other).toBeNull();
      } finally {
        await holder.release();
      }
    });
  });

  describe('dueSoon', () => {
    it('lists PENDING deliveries due by the horizon, earliest first, up to the limit', async () => {
      const [a, b, c, later, ended] = [delivery(), delivery(), delivery(), delivery(), delivery()];
      await insertDue([c], at(900));
      await insertDue([a], at(100));
      await insertDue([b], at(500));
      await insertDue([later], at(1001));
      await insertDue([ended], at(0));
      await inTransaction((manager) =>
        recordAttempts(manager, [record(ended.id, 1, { outcome: 'ACKNOWLEDGED', statusCode: 204, error: null, status: 'DELIVERED', nextAttemptAt: null })], at(0)),
      );

      expect(await dueSoon(dataSource.manager, at(1000), 10)).toEqual([
        { id: a.id, nextAttemptAt: at(100) },
        { id: b.id, nextAttemptAt: at(500) },
        { id: c.id, nextAttemptAt: at(900) },
      ]);
      expect((await dueSoon(dataSource.manager, at(1000), 2)).map((due) => due.id)).toEqual([a.id, b.id]);
      expect(await dueSoon(dataSource.manager, at(99), 10)).toEqual([]);
    });
  });

  describe('recordAttempts', () => {
    it('records a failed attempt with its next attempt time, then the acknowledged one that ends the delivery', async () => {
      const one = delivery();
      await insertDue([one], at(0));
      const failed = record(one.id, 1, { nextAttemptAt: at(1500) });
      expect(await inTransaction((manager) => recordAttempts(manager, [failed], at(1100)))).toEqual([failed]);
      expect(await row(one.id)).toEqual({ status: 'PENDING', attempts_made: 1, next_attempt_at: at(1500), updated_at: at(1100), completed_at: null });

      const acknowledged = record(one.id, 2, { outcome: 'ACKNOWLEDGED', statusCode: 200, error: null, status: 'DELIVERED', nextAttemptAt: null, durationMs: 7 });
      expect(await inTransaction((manager) => recordAttempts(manager, [acknowledged], at(2100)))).toEqual([acknowledged]);
      expect(await row(one.id)).toEqual({ status: 'DELIVERED', attempts_made: 2, next_attempt_at: null, updated_at: at(2100), completed_at: at(2100) });
      expect(await attempts(one.id)).toEqual([
        { attempt: 1, outcome: 'HTTP_ERROR', status_code: 500, error: 'receiver answered 500', duration_ms: 12 },
        { attempt: 2, outcome: 'ACKNOWLEDGED', status_code: 200, error: null, duration_ms: 7 },
      ]);
    });

    it('the last failed attempt fails the delivery', async () => {
      const one = delivery();
      await insertDue([one], at(0));
      await inTransaction((manager) => recordAttempts(manager, [record(one.id, 1)], at(1000)));
      await inTransaction((manager) => recordAttempts(manager, [record(one.id, 2)], at(2000)));
      const last = record(one.id, 3, { outcome: 'TIMEOUT', statusCode: null, error: 'no answer within 10 s', status: 'FAILED', nextAttemptAt: null });
      expect(await inTransaction((manager) => recordAttempts(manager, [last], at(3000)))).toEqual([last]);
      expect(await row(one.id)).toMatchObject({ status: 'FAILED', attempts_made: 3, next_attempt_at: null, completed_at: at(3000) });
      expect((await attempts(one.id)).map((a) => [a.attempt, a.outcome, a.status_code])).toEqual([
        [1, 'HTTP_ERROR', 500],
        [2, 'HTTP_ERROR', 500],
        [3, 'TIMEOUT', null],
      ]);
    });

    it('an attempt recorded already, or not the next one, changes nothing (a repeat after a lost lease)', async () => {
      const one = delivery();
      await insertDue([one], at(0));
      await inTransaction((manager) => recordAttempts(manager, [record(one.id, 1)], at(1000)));
      const repeated = record(one.id, 1, { outcome: 'ACKNOWLEDGED', statusCode: 200, error: null, status: 'DELIVERED', nextAttemptAt: null });
      const skipping = record(one.id, 3, { status: 'FAILED', nextAttemptAt: null });
      expect(await inTransaction((manager) => recordAttempts(manager, [repeated, skipping], at(1200)))).toEqual([]);
      expect(await row(one.id)).toMatchObject({ status: 'PENDING', attempts_made: 1, updated_at: at(1000) });
      expect((await attempts(one.id)).map((a) => [a.attempt, a.outcome])).toEqual([[1, 'HTTP_ERROR']]);
    });

    it('an ended delivery takes no further attempt', async () => {
      const one = delivery();
      await insertDue([one], at(0));
      await inTransaction((manager) =>
        recordAttempts(manager, [record(one.id, 1, { outcome: 'ACKNOWLEDGED', statusCode: 200, error: null, status: 'DELIVERED', nextAttemptAt: null })], at(1000)),
      );
      expect(await inTransaction((manager) => recordAttempts(manager, [record(one.id, 2)], at(2000)))).toEqual([]);
      expect(await row(one.id)).toMatchObject({ status: 'DELIVERED', attempts_made: 1 });
    });

    it('records a batch over several deliveries, keeping only the ones that apply', async () => {
      const [a, b, c] = [delivery(), delivery(), delivery()];
      await insertDue([a, b, c], at(0));
      const forA = record(a.id, 1);
      const forB = record(b.id, 1, { outcome: 'REFUSED', statusCode: null, error: 'address not allowed' });
      const notNext = record(c.id, 2);
      expect(await inTransaction((manager) => recordAttempts(manager, [forA, forB, notNext], at(1000)))).toEqual([forA, forB]);
      expect((await attempts(b.id)).map((x) => [x.attempt, x.outcome, x.error])).toEqual([[1, 'REFUSED', 'address not allowed']]);
      expect(await attempts(c.id)).toEqual([]);
      expect(await row(c.id)).toMatchObject({ status: 'PENDING', attempts_made: 0 });
      expect(await inTransaction((manager) => recordAttempts(manager, [], at(1000)))).toEqual([]);
    });

    it('of two replicas recording the same attempt at once, one record applies', async () => {
      const one = delivery();
      await insertDue([one], at(0));
      const results = await Promise.all([
        inTransaction((manager) => recordAttempts(manager, [record(one.id, 1)], at(1000))),
        inTransaction((manager) => recordAttempts(manager, [record(one.id, 1, { outcome: 'TIMEOUT', statusCode: null, error: 'no answer' })], at(1001))),
      ]);
      expect(results.map((applied) => applied.length).sort()).toEqual([0, 1]);
      expect(await attempts(one.id)).toHaveLength(1);
      expect((await row(one.id))?.attempts_made).toBe(1);
    });
  });
});
