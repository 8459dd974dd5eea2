import { randomUUID } from 'node:crypto';
import type { DataSource, EntityManager } from 'typeorm';
import { createServiceDataSource } from '@runline/db';
import { migrateServices } from '@runline/runtime';
import { createTestDatabase, type TestDatabase } from '@runline/testing';
import { pollingService } from '../src/polling.service.js';
import {
  claimDueTriggers,
  completePolls,
  deleteProjectTriggers,
  deleteTrigger,
  listTriggers,
  nextDueAt,
  renewLease,
  upsertTrigger,
  type NewTrigger,
  type PollCompletion,
} from '../src/polling/polling-triggers.repository.js';

const T = new Date('2030-01-01T00:00:00.000Z').getTime();
const at = (offsetMs: number) => new Date(T + offsetMs);

/** The polling triggers repository on a real PostgreSQL: each statement, its guards and races. */
describe('polling triggers repository', () => {
  let database: TestDatabase;
  let dataSource: DataSource;
  const orgId = randomUUID();

  const trigger = (overrides: Partial<NewTrigger> = {}): NewTrigger => ({
    id: randomUUID(),
    orgId,
    projectId: randomUUID(),
    pollKey: `key-${randomUUID().slice(0, 8)}`,
    source: 'crm',
    pollEndpoint: 'https://crm.example/items',
    dedupeField: 'id',
    sealedAuthHeader: 'sealed-auth',
    intervalMs: 60_000,
    runTarget: 'FLOW',
    ...overrides,
  });
  const inTransaction = <R>(work: (manager: EntityManager) => Promise<R>) => dataSource.transaction(work);
  /** A trigger whose next poll is due at `dueAt`. */
  const due = (dueAt: Date, overrides: Partial<NewTrigger> = {}) => inTransaction((manager) => upsertTrigger(manager, trigger(overrides), dueAt));
  const claim = (now: Date, horizon: Date, leaseId: string, limit = 100, leasedUntil = at(120_000)) =>
    inTransaction((manager) => claimDueTriggers(manager, now, horizon, leasedUntil, leaseId, limit));
  const lease = async (id: string) =>
    (await dataSource.query(`SELECT lease_id, leased_until FROM polling_triggers WHERE id = $1`, [id]))[0] as { lease_id: string | null; leased_until: Date | null } | undefined;

  beforeAll(async () => {
    database = await createTestDatabase();
    await migrateServices([pollingService], database.url);
    dataSource = createServiceDataSource({ url: database.url, schema: 'polling', migrations: [] });
    await dataSource.initialize();
  });
  beforeEach(async () => {
    await dataSource.query('DELETE FROM polling_triggers');
  });
  afterAll(async () => {
    await dataSource?.destroy();
    await database?.drop();
  });

  describe('upsertTrigger', () => {
    it('inserts a trigger due at once, with nothing polled yet', async () => {
      const fresh = trigger({ sealedAuthHeader: null });
      const row = await inTransaction((manager) => upsertTrigger(manager, fresh, at(0)));
      expect(row).toEqual({
        ...fresh,
        lastSeenValue: null,
        lastPolledAt: null,
        nextPollAt: at(0),
        createdAt: at(0),
        updatedAt: at(0),
      });
    });

    it('registering the same poll key again updates that trigger, keeping its id, creation time and lastSeenValue', async () => {
      const first = trigger();
      await inTransaction((manager) => upsertTrigger(manager, first, at(0)));
      const [claimed] = await claim(at(0), at(0), randomUUID());
      await inTransaction((manager) =>
        completePolls(manager, [{ id: first.id, leaseId: claimed!.leaseId, lastSeenValue: 'item-7', lastPolledAt: at(10), nextPollAt: at(60_000) }], at(20)),
      );

      const again = trigger({
        projectId: first.projectId,
        pollKey: first.pollKey,
        source: 'erp',
        pollEndpoint: 'https://erp.example/feed',
        dedupeField: 'uid',
        sealedAuthHeader: null,
        intervalMs: 5_000,
      });
      const row = await inTransaction((manager) => upsertTrigger(manager, again, at(1000)));
      expect(row).toEqual({
        ...again,
        id: first.id,
        lastSeenValue: 'item-7',
        lastPolledAt: at(10),
        nextPollAt: at(1000),
        createdAt: at(0),
        updatedAt: at(1000),
      });
      expect(Number((await dataSource.query(`SELECT count(*) AS n FROM polling_triggers`))[0].n)).toBe(1);
    });

    it('the same poll key in another project is another trigger', async () => {
      const first = trigger();
      const other = trigger({ pollKey: first.pollKey });
      await inTransaction((manager) => upsertTrigger(manager, first, at(0)));
      expect((await inTransaction((manager) => upsertTrigger(manager, other, at(0)))).id).toBe(other.id);
    });
  });

  describe('listTriggers', () => {
    it("lists the project's triggers in creation order, or the one with a poll key", async () => {
      const projectId = randomUUID();
      const second = await due(at(2000), { projectId, pollKey: 'b' });
      const first = await due(at(1000), { projectId, pollKey: 'a' });
      await inTransaction((manager) => upsertTrigger(manager, { ...second, id: randomUUID() }, at(500)));
      await due(at(0), { pollKey: 'a' });

      // Registering 'b' again keeps its creation time, so it stays after 'a'.
      const listed = await listTriggers(dataSource.manager, projectId, null);
      expect(listed.map((row) => [row.pollKey, row.createdAt])).toEqual([
        ['a', at(1000)],
        ['b', at(2000)],
      ]);
      expect((await listTriggers(dataSource.manager, projectId, 'a')).map((row) => row.id)).toEqual([first.id]);
      expect(await listTriggers(dataSource.manager, projectId, 'missing')).toEqual([]);
      expect(await listTriggers(dataSource.manager, randomUUID(), null)).toEqual([]);
    });
  });

  describe('deleteTrigger and deleteProjectTriggers', () => {
    it('deletes one trigger of the project: true once, then false', async () => {
      const one = await due(at(0));
      const sameKeyElsewhere = await due(at(0), { pollKey: one.pollKey });
      expect(await inTransaction((manager) => deleteTrigger(manager, one.projectId, one.pollKey))).toBe(true);
      expect(await inTransaction((manager) => deleteTrigger(manager, one.projectId, one.pollKey))).toBe(false);
      expect((await listTriggers(dataSource.manager, sameKeyElsewhere.projectId, null)).map((row) => row.id)).toEqual([sameKeyElsewhere.id]);
    });

    it("deletes every trigger of a deleted project, and only those", async () => {
      const projectId = randomUUID();
      await due(at(0), { projectId, pollKey: 'a' });
      await due(at(0), { projectId, pollKey: 'b' });
      const kept = await due(at(0));
      await inTransaction((manager) => deleteProjectTriggers(manager, projectId));
      expect(await listTriggers(dataSource.manager, projectId, null)).toEqual([]);
      expect((await listTriggers(dataSource.manager, kept.projectId, null)).map((row) => row.id)).toEqual([kept.id]);
    });
  });

  describe('claimDueTriggers', () => {
    it('claims triggers due by the horizon, earliest first up to the limit, leased to the claimer; the due time stays', async () => {
      const early = await due(at(-2000));
      const middle = await due(at(-1000));
      const inLead = await due(at(150));
      const later = await due(at(201));
      const leaseId = randomUUID();

      const claimed = await claim(at(0), at(200), leaseId, 2, at(120_200));
      expect(claimed.map((row) => row.id).sort()).toEqual([early.id, middle.id].sort());
      for (const row of claimed) expect(row).toMatchObject({ leaseId, dueAt: row.nextPollAt });
      expect(claimed.find((row) => row.id === early.id)?.dueAt).toEqual(at(-2000));
      expect(await lease(early.id)).toEqual({ lease_id: leaseId, leased_until: at(120_200) });
      const [stillDue] = (await dataSource.query(`SELECT next_poll_at FROM polling_triggers WHERE id = $1`, [early.id])) as Array<{ next_poll_at: Date }>;
      expect(stillDue?.next_poll_at).toEqual(at(-2000));

      expect((await claim(at(0), at(200), randomUUID())).map((row) => row.id)).toEqual([inLead.id]);
      expect(await claim(at(0), at(200), randomUUID())).toEqual([]);
      expect((await lease(later.id))?.lease_id).toBeNull();
    });

    it('a lease that ran out can be claimed again by another replica, for the same due time', async () => {
      const one = await due(at(0));
      const [first] = await claim(at(0), at(0), randomUUID(), 10, at(1000));
      expect(await claim(at(999), at(999), randomUUID())).toEqual([]);
      const otherLease = randomUUID();
      const [retaken] = await claim(at(1000), at(1000), otherLease, 10, at(2000));
      expect(retaken).toMatchObject({ id: one.id, leaseId: otherLease, dueAt: first!.dueAt });
    });

    it('skips the rows another replica is claiming instead of waiting for them (SKIP LOCKED)', async () => {
      const rows = [await due(at(-4)), await due(at(-3)), await due(at(-2)), await due(at(-1))];
      const holder = dataSource.createQueryRunner();
      await holder.connect();
      try {
        await holder.startTransaction();
        const first = await claimDueTriggers(holder.manager, at(0), at(0), at(120_000), randomUUID(), 2);
        expect(first.map((row) => row.id).sort()).toEqual([rows[0]!.id, rows[1]!.id].sort());
        // Waiting on a locked row would fail this statement instead of answering.
        const second = await inTransaction(async (manager) => {
          await manager.query(`SET LOCAL lock_timeout = '2s'`);
          return claimDueTriggers(manager, at(0), at(0), at(120_000), randomUUID(), 10);
        });
        expect(second.map((row) => row.id).sort()).toEqual([rows[2]!.id, rows[3]!.id].sort());
        await holder.commitTransaction();
      } finally {
        await holder.release();
      }
      expect(await claim(at(0), at(0), randomUUID())).toEqual([]);
    });
  });

  describe('nextDueAt', () => {
    it('is the earliest due time no live lease holds', async () => {
      expect(await nextDueAt(dataSource.manager, at(0))).toBeNull();
      await due(at(-500));
      const leased = await due(at(-1000));
      await due(at(3000));
      expect(await nextDueAt(dataSource.manager, at(0))).toEqual(at(-1000));
      await inTransaction((manager) => claimDueTriggers(manager, at(0), at(-1000), at(5000), randomUUID(), 1));
      expect((await lease(leased.id))?.leased_until).toEqual(at(5000));
      expect(await nextDueAt(dataSource.manager, at(0))).toEqual(at(-500));
      // Once the lease runs out, it counts again.
      expect(await nextDueAt(dataSource.manager, at(5000))).toEqual(at(-1000));
    });
  });

  describe('renewLease', () => {
    it('extends a lease its holder still has; false for another lease or a deleted trigger', async () => {
      const one = await due(at(0));
      const leaseId = randomUUID();
      await claim(at(0), at(0), leaseId, 10, at(1000));
      expect(await renewLease(dataSource.manager, one.id, leaseId, at(9000))).toBe(true);
      expect(await lease(one.id)).toEqual({ lease_id: leaseId, leased_until: at(9000) });
      expect(await renewLease(dataSource.manager, one.id, randomUUID(), at(20_000))).toBe(false);
      expect((await lease(one.id))?.leased_until).toEqual(at(9000));
      await inTransaction((manager) => deleteTrigger(manager, one.projectId, one.pollKey));
      expect(await renewLease(dataSource.manager, one.id, leaseId, at(30_000))).toBe(false);
    });
  });

  describe('completePolls', () => {
    it('writes back the outcome under the lease and releases it', async () => {
      const [a, b] = [await due(at(0)), await due(at(0))];
      const leaseId = randomUUID();
      await claim(at(0), at(0), leaseId);
      const completions: PollCompletion[] = [
        { id: a.id, leaseId, lastSeenValue: 'item-9', lastPolledAt: at(5), nextPollAt: at(60_000) },
        // A skipped poll: nothing polled, and nothing before either.
        { id: b.id, leaseId, lastSeenValue: null, lastPolledAt: null, nextPollAt: at(60_000) },
      ];
      expect(await inTransaction((manager) => completePolls(manager, completions, at(50)))).toEqual(new Set([a.id, b.id]));
      const [row] = await listTriggers(dataSource.manager, a.projectId, null);
      expect(row).toMatchObject({ lastSeenValue: 'item-9', lastPolledAt: at(5), nextPollAt: at(60_000), updatedAt: at(50), createdAt: at(0) });
      expect(await lease(a.id)).toEqual({ lease_id: null, leased_until: null });
      expect((await listTriggers(dataSource.manager, b.projectId, null))[0]).toMatchObject({ lastSeenValue: null, lastPolledAt: null });
      // Released: due again at its next poll.
      expect(await nextDueAt(dataSource.manager, at(100))).toEqual(at(60_000));
    });

    it('a poll whose lease was lost (run out and taken, or the trigger deleted) writes nothing', async () => {
      const [kept, retaken, deleted] = [await due(at(0)), await due(at(0)), await due(at(0))];
      const oldLease = randomUUID();
      await claim(at(0), at(0), oldLease, 10, at(1000));
      const newLease = randomUUID();
      await inTransaction((manager) => claimDueTriggers(manager, at(1000), at(1000), at(2000), newLease, 10));
      await inTransaction((manager) => deleteTrigger(manager, deleted.projectId, deleted.pollKey));
      const completion = (id: string, leaseId: string): PollCompletion => ({ id, leaseId, lastSeenValue: 'late', lastPolledAt: at(1500), nextPollAt: at(60_000) });

      const written = await inTransaction((manager) =>
        completePolls(manager, [completion(kept.id, newLease), completion(retaken.id, oldLease), completion(deleted.id, oldLease)], at(1600)),
      );
      expect(written).toEqual(new Set([kept.id]));
      expect((await lease(retaken.id))?.lease_id).toBe(newLease);
      expect((await listTriggers(dataSource.manager, retaken.projectId, null))[0]).toMatchObject({ lastSeenValue: null, nextPollAt: at(0) });
      expect(await inTransaction((manager) => completePolls(manager, [], at(1600)))).toEqual(new Set());
    });
  });
});
