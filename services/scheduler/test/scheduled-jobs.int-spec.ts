import { randomUUID } from 'node:crypto';
import type { DataSource, EntityManager } from 'typeorm';
import { createServiceDataSource } from '@runline/db';
import { migrateServices } from '@runline/runtime';
import { createTestDatabase, type TestDatabase } from '@runline/testing';
import {
  cancelWaitingJob,
  claimDueJobs,
  insertJob,
  jobStatus,
  moveWaitingJob,
  nextDueAt,
  pruneEndedJobs,
  type JobFields,
} from '../src/jobs/scheduled-jobs.repository.js';
import { schedulerService } from '../src/scheduler.service.js';

const T = new Date('2030-01-01T00:00:00.000Z').getTime();
const at = (offsetMs: number) => new Date(T + offsetMs);

/** The scheduled jobs repository on a real PostgreSQL: each statement, its guards and races. */
describe('scheduled jobs repository', () => {
  let database: TestDatabase;
  let dataSource: DataSource;

  const job = (dueAt: Date | null, overrides: Partial<JobFields> = {}): JobFields => ({
    name: `job-${randomUUID()}`,
    kind: 'START_RUN',
    invocationId: randomUUID(),
    orgId: randomUUID(),
    projectId: randomUUID(),
    dueAt,
    correlationId: 'corr',
    causationId: 'cause',
    traceparent: null,
    ...overrides,
  });
  const inTransaction = <R>(work: (manager: EntityManager) => Promise<R>) => dataSource.transaction(work);
  const waiting = async (dueAt: Date, overrides: Partial<JobFields> = {}) => {
    const fields = job(dueAt, overrides);
    expect(await insertJob(dataSource.manager, fields, 'SCHEDULED', at(-60_000))).toBe(true);
    return fields as JobFields & { dueAt: Date };
  };
  const stored = async (name: string) =>
    (await dataSource.query(`SELECT status, due_at, fired_at, cancelled_at, updated_at FROM scheduled_jobs WHERE name = $1`, [name]))[0] as
      | { status: string; due_at: Date | null; fired_at: Date | null; cancelled_at: Date | null; updated_at: Date }
      | undefined;

  beforeAll(async () => {
    database = await createTestDatabase();
    await migrateServices([schedulerService], database.url);
    dataSource = createServiceDataSource({ url: database.url, schema: 'scheduler', migrations: [] });
    await dataSource.initialize();
  });
  beforeEach(async () => {
    await dataSource.query('DELETE FROM scheduled_jobs');
  });
  afterAll(async () => {
    await dataSource?.destroy();
    await database?.drop();
  });

  describe('insertJob and jobStatus', () => {
    it('inserts a job once by name; a later one of that name changes nothing', async () => {
      const first = job(at(1000));
      expect(await insertJob(dataSource.manager, first, 'SCHEDULED', at(0))).toBe(true);
      expect(await insertJob(dataSource.manager, { ...job(at(5000)), name: first.name }, 'SCHEDULED', at(10))).toBe(false);
      expect(await stored(first.name)).toEqual({ status: 'SCHEDULED', due_at: at(1000), fired_at: null, cancelled_at: null, updated_at: at(0) });
      expect(await jobStatus(dataSource.manager, first.name)).toBe('SCHEDULED');
      expect(await jobStatus(dataSource.manager, 'no-such-job')).toBeNull();
    });

    it('a tombstone is a cancelled job without a due time, and its ScheduleJob arriving later is ignored', async () => {
      const tombstone = job(null);
      expect(await insertJob(dataSource.manager, tombstone, 'CANCELLED', at(0))).toBe(true);
      expect(await stored(tombstone.name)).toEqual({ status: 'CANCELLED', due_at: null, fired_at: null, cancelled_at: at(0), updated_at: at(0) });
      expect(await insertJob(dataSource.manager, { ...tombstone, dueAt: at(100) }, 'SCHEDULED', at(1))).toBe(false);
      expect(await jobStatus(dataSource.manager, tombstone.name)).toBe('CANCELLED');
    });
  });

  describe('claimDueJobs and nextDueAt', () => {
    it('fires waiting jobs due by the horizon, earliest first up to the limit, sorted by due time', async () => {
      const late = await waiting(at(-100));
      const early = await waiting(at(-300));
      const middle = await waiting(at(-200));
      const inLead = await waiting(at(50));
      const notYet = await waiting(at(101));
      expect(await nextDueAt(dataSource.manager)).toEqual(at(-300));

      const fired = await inTransaction((manager) => claimDueJobs(manager, at(100), at(0), 2));
      expect(fired.map((claimed) => claimed.name)).toEqual([early.name, middle.name]);
      expect(fired[0]).toEqual({ ...early, traceparent: null });
      expect(await stored(early.name)).toMatchObject({ status: 'FIRED', fired_at: at(0), updated_at: at(0) });
      expect(await nextDueAt(dataSource.manager)).toEqual(at(-100));

      expect((await inTransaction((manager) => claimDueJobs(manager, at(100), at(1), 10))).map((claimed) => claimed.name)).toEqual([late.name, inLead.name]);
      expect(await inTransaction((manager) => claimDueJobs(manager, at(100), at(2), 10))).toEqual([]);
      expect(await nextDueAt(dataSource.manager)).toEqual(notYet.dueAt);
    });

    it('never fires a cancelled job or a tombstone', async () => {
      const cancelled = await waiting(at(-10));
      await cancelWaitingJob(dataSource.manager, cancelled.name, at(-5));
      await insertJob(dataSource.manager, job(null), 'CANCELLED', at(-5));
      expect(await inTransaction((manager) => claimDueJobs(manager, at(0), at(0), 10))).toEqual([]);
      expect(await nextDueAt(dataSource.manager)).toBeNull();
    });

    it('skips the jobs another pass is firing instead of waiting for them (SKIP LOCKED)', async () => {
      const jobs = [await waiting(at(-4)), await waiting(at(-3)), await waiting(at(-2)), await waiting(at(-1))];
      const holder = dataSource.createQueryRunner();
      await holder.connect();
      try {
        await holder.startTransaction();
        expect((await claimDueJobs(holder.manager, at(0), at(0), 2)).map((claimed) => claimed.name)).toEqual([jobs[0]!.name, jobs[1]!.name]);
        const second = await inTransaction(async (manager) => {
          await manager.query(`SET LOCAL lock_timeout = '2s'`);
          return claimDueJobs(manager, at(0), at(0), 10);
        });
        expect(second.map((claimed) => claimed.name)).toEqual([jobs[2]!.name, jobs[3]!.name]);
        await holder.commitTransaction();
      } finally {
        await holder.release();
      }
      expect(await inTransaction((manager) => claimDueJobs(manager, at(0), at(0), 10))).toEqual([]);
    });
  });

  describe('cancelWaitingJob', () => {
    it('cancels a waiting job once; a fired job is not cancelled', async () => {
      const one = await waiting(at(1000));
      expect(await cancelWaitingJob(dataSource.manager, one.name, at(10))).toEqual({ ...one, traceparent: null });
      expect(await stored(one.name)).toMatchObject({ status: 'CANCELLED', cancelled_at: at(10), updated_at: at(10) });
      expect(await cancelWaitingJob(dataSource.manager, one.name, at(20))).toBeNull();

      const fired = await waiting(at(0));
      await inTransaction((manager) => claimDueJobs(manager, at(0), at(0), 10));
      expect(await cancelWaitingJob(dataSource.manager, fired.name, at(20))).toBeNull();
      expect(await cancelWaitingJob(dataSource.manager, 'no-such-job', at(20))).toBeNull();
    });

    it('racing with a firing pass, the row lock decides: fired, so not cancelled', async () => {
      const one = await waiting(at(0));
      const holder = dataSource.createQueryRunner();
      await holder.connect();
      try {
        await holder.startTransaction();
        expect(await claimDueJobs(holder.manager, at(0), at(0), 10)).toHaveLength(1);
        const cancel = inTransaction((manager) => cancelWaitingJob(manager, one.name, at(1)));
        // Committed once the cancel is seen waiting for the row, however long it takes to get there.
        for (let waited = 0; ; waited += 20) {
          const [{ waiting }] = await dataSource.query<Array<{ waiting: number }>>(
            `SELECT count(*)::int AS waiting FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`,
          );
          if (waiting >= 1) break;
          if (waited > 10_000) throw new Error('the cancel never waited for the row');
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
        await holder.commitTransaction();
        expect(await cancel).toBeNull();
      } finally {
        await holder.release();
      }
      expect(await jobStatus(dataSource.manager, one.name)).toBe('FIRED');
    });
  });

  describe('moveWaitingJob', () => {
    it('moves a waiting job and answers the due time it had; ended jobs do not move', async () => {
      const one = await waiting(at(1000));
      const moved = await inTransaction((manager) => moveWaitingJob(manager, one.name, at(5000), at(10)));
      expect(moved).toEqual({ job: { ...one, dueAt: at(5000), traceparent: null }, previousDueAt: at(1000) });
      expect(await stored(one.name)).toMatchObject({ status: 'SCHEDULED', due_at: at(5000), updated_at: at(10) });

      await cancelWaitingJob(dataSource.manager, one.name, at(20));
      expect(await inTransaction((manager) => moveWaitingJob(manager, one.name, at(9000), at(30)))).toBeNull();
      expect(await inTransaction((manager) => moveWaitingJob(manager, 'no-such-job', at(9000), at(30)))).toBeNull();
      expect((await stored(one.name))?.due_at).toEqual(at(5000));
    });
  });

  describe('pruneEndedJobs', () => {
    it('deletes up to the limit of the jobs that ended before the cut-off, oldest first; waiting jobs stay', async () => {
      const endedAt = async (dueAt: Date, endAt: Date, how: 'fire' | 'cancel') => {
        const fields = await waiting(dueAt);
        if (how === 'cancel') await cancelWaitingJob(dataSource.manager, fields.name, endAt);
        else await dataSource.query(`UPDATE scheduled_jobs SET status = 'FIRED', fired_at = $2, updated_at = $2 WHERE name = $1`, [fields.name, endAt]);
        return fields.name;
      };
      const oldest = await endedAt(at(0), at(-3000), 'fire');
      const older = await endedAt(at(0), at(-2000), 'cancel');
      const recent = await endedAt(at(0), at(0), 'fire');
      const old = await waiting(at(-90_000));
      const tombstone = job(null);
      await insertJob(dataSource.manager, tombstone, 'CANCELLED', at(-1000));

      expect(await pruneEndedJobs(dataSource.manager, at(-500), 2)).toBe(2);
      expect(await stored(oldest)).toBeUndefined();
      expect(await stored(older)).toBeUndefined();
      expect(await pruneEndedJobs(dataSource.manager, at(-500), 10)).toBe(1);
      expect(await stored(tombstone.name)).toBeUndefined();
      expect(await pruneEndedJobs(dataSource.manager, at(-500), 10)).toBe(0);
      expect((await stored(recent))?.status).toBe('FIRED');
      expect((await stored(old.name))?.status).toBe('SCHEDULED');
    });
  });
});
