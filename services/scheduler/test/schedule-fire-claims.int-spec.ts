import { randomUUID } from 'node:crypto';
import type { DataSource, EntityManager, QueryRunner } from 'typeorm';
import { createServiceDataSource } from '@runline/db';
import { migrateServices } from '@runline/runtime';
import { createTestDatabase, type TestDatabase } from '@runline/testing';
import {
  claimPendingFires,
  insertFires,
  lockProjectSchedules,
  PENDING_FIRES_PER_SCHEDULE_PER_BATCH,
  recordFireOutcome,
  type PendingFire,
} from '../src/schedules/schedule-rows.repository.js';
import { schedulerService } from '../src/scheduler.service.js';

const T = new Date('2030-01-01T00:00:00.000Z').getTime();
const HORIZON = new Date(T + 3_600_000);
const MINUTE = 60_000;

/**
 * The claim of waiting (backfill) fires on a real PostgreSQL: a schedule's fires start strictly
 * oldest first, whichever batches, replicas and publishes hold its rows meanwhile (DESIGN section 12).
 */
describe('claimPendingFires', () => {
  let database: TestDatabase;
  let dataSource: DataSource;
  const holders: QueryRunner[] = [];

  beforeAll(async () => {
    database = await createTestDatabase();
    await migrateServices([schedulerService], database.url);
    dataSource = createServiceDataSource({ url: database.url, schema: 'scheduler', migrations: [], poolSize: 12 });
    await dataSource.initialize();
  });
  beforeEach(async () => {
    await dataSource.query('DELETE FROM schedule_fires');
    await dataSource.query('DELETE FROM schedules');
  });
  afterEach(async () => {
    for (const holder of holders.splice(0)) {
      if (holder.isTransactionActive) await holder.rollbackTransaction();
      await holder.release();
    }
  });
  afterAll(async () => {
    await dataSource?.destroy();
    await database?.drop();
  });

  /** A schedule with `count` backfill fires, a minute apart, due a millisecond apart in fire order (as BackfillFiresHandler records them). */
  async function backfilledSchedule(count: number): Promise<{ projectId: string; scheduleId: string; fireTimes: number[] }> {
    const projectId = randomUUID();
    const orgId = randomUUID();
    const scheduleId = 'minutely';
    await dataSource.query(
      `INSERT INTO schedules (project_id, schedule_id, org_id, position, definition, fingerprint, anchor_at, published_version, config_version, created_at, updated_at)
       VALUES ($1, $2, $3, 0, '{"every": "1m"}', 'f', $4, 1, 1, $4, $4)`,
      [projectId, scheduleId, orgId, new Date(T)],
    );
    const fireTimes = Array.from({ length: count }, (_, index) => T - (count - index) * MINUTE);
    await insertFires(
      dataSource.manager,
      fireTimes.map((time, index) => ({ projectId, scheduleId, orgId, scheduledTime: new Date(time), kind: 'BACKFILL' as const, status: 'PENDING' as const, dueAt: new Date(T + index) })),
      new Date(T),
    );
    return { projectId, scheduleId, fireTimes };
  }

  /** A transaction left open until the test ends it (or afterEach rolls it back). */
  async function openTransaction(): Promise<QueryRunner> {
    const holder = dataSource.createQueryRunner();
    holders.push(holder);
    await holder.connect();
    await holder.startTransaction();
    // A claim must skip, never wait: a wait would show as this timeout instead of a hang.
    await holder.query(`SET LOCAL lock_timeout = '5s'`);
    return holder;
  }

  const timesOf = (fires: readonly PendingFire[]) => fires.map((fire) => fire.scheduledTime.getTime());

  /** How many of the schedule's fire rows some other transaction holds locked. */
  async function lockedFires(projectId: string): Promise<number> {
    const [row] = await dataSource.query<Array<{ locked: number }>>(
      `SELECT (SELECT count(*) FROM schedule_fires WHERE project_id = $1)::int
            - (SELECT count(*) FROM (SELECT 1 FROM schedule_fires WHERE project_id = $1 FOR UPDATE SKIP LOCKED) free)::int AS locked`,
      [projectId],
    );
    return row!.locked;
  }

  it(`claims a schedule's oldest waiting fires, at most ${PENDING_FIRES_PER_SCHEDULE_PER_BATCH}, with its row`, async () => {
    const { projectId, fireTimes } = await backfilledSchedule(50);
    const claimed = await dataSource.transaction((manager) => claimPendingFires(manager, HORIZON, 500));
    expect(timesOf(claimed)).toEqual(fireTimes.slice(0, PENDING_FIRES_PER_SCHEDULE_PER_BATCH));
    expect(new Set(claimed.map((fire) => fire.schedule.projectId))).toEqual(new Set([projectId]));
    expect(claimed.every((fire) => fire.kind === 'BACKFILL')).toBe(true);
  });

  it('a claim that finds the schedule held (a publish) takes none of its fires and leaves none of them locked', async () => {
    const { projectId, fireTimes } = await backfilledSchedule(60);
    const publish = await openTransaction();
    await lockProjectSchedules(publish.manager, projectId);
    // Another replica's batch claims meanwhile and stays open, starting fires of other schedules.
    const otherBatch = await openTransaction();
    expect(await claimPendingFires(otherBatch.manager, HORIZON, 500)).toEqual([]);
    expect(await lockedFires(projectId)).toBe(0);
    await publish.commitTransaction();
    // The publish answered: the next claim takes the oldest fires, not later ones.
    const next = await openTransaction();
    expect(timesOf(await claimPendingFires(next.manager, HORIZON, 500))).toEqual(fireTimes.slice(0, PENDING_FIRES_PER_SCHEDULE_PER_BATCH));
  });

  it('a claim never passes over an older waiting fire whose row another transaction holds', async () => {
    // What a claim that lost the race for the schedule's row could leave behind: a lock on some of its fires.
    const { projectId, fireTimes } = await backfilledSchedule(60);
    const holder = await openTransaction();
    await holder.query(`SELECT 1 FROM schedule_fires WHERE project_id = $1 AND scheduled_time = $2 FOR UPDATE`, [projectId, new Date(fireTimes[1]!)]);
    const claimed = await dataSource.transaction((manager) => claimPendingFires(manager, HORIZON, 500));
    expect(timesOf(claimed)).toEqual(fireTimes.slice(0, PENDING_FIRES_PER_SCHEDULE_PER_BATCH));
  });

  it('claims nothing of a schedule another batch holds, and its next fires once that batch committed', async () => {
    const { fireTimes } = await backfilledSchedule(60);
    const first = await openTransaction();
    const firstClaim = await claimPendingFires(first.manager, HORIZON, 500);
    expect(timesOf(firstClaim)).toEqual(fireTimes.slice(0, PENDING_FIRES_PER_SCHEDULE_PER_BATCH));
    const second = await openTransaction();
    expect(await claimPendingFires(second.manager, HORIZON, 500)).toEqual([]);
    await second.commitTransaction();
    await startedInTransaction(first.manager, firstClaim);
    await first.commitTransaction();
    const third = await dataSource.transaction((manager) => claimPendingFires(manager, HORIZON, 500));
    expect(timesOf(third)).toEqual(fireTimes.slice(PENDING_FIRES_PER_SCHEDULE_PER_BATCH, 2 * PENDING_FIRES_PER_SCHEDULE_PER_BATCH));
  });

  it('three replicas claiming 600 fires while publishes come and go start them strictly oldest first, each once', async () => {
    const { projectId, fireTimes } = await backfilledSchedule(600);
    const startOrder: number[] = [];
    let done = false;
    const waiting = async () => {
      const [row] = await dataSource.query<Array<{ n: number }>>(`SELECT count(*)::int AS n FROM schedule_fires WHERE status = 'PENDING'`);
      return row!.n;
    };
    const replica = async () => {
      while (!done) {
        await dataSource.transaction(async (manager) => {
          const fires = await claimPendingFires(manager, HORIZON, 500);
          // As ScheduleFirer.startAll: one after the other, each start a round trip.
          for (const fire of [...fires].sort((a, b) => a.scheduledTime.getTime() - b.scheduledTime.getTime())) {
            startOrder.push(fire.scheduledTime.getTime());
            await manager.query('SELECT pg_sleep(0.0005)');
          }
          await startedInTransaction(manager, fires);
        });
        if ((await waiting()) === 0) done = true;
      }
    };
    const publishes = async () => {
      while (!done) {
        await dataSource.transaction(async (manager) => {
          await lockProjectSchedules(manager, projectId);
          await manager.query('SELECT pg_sleep(0.002)');
        });
      }
    };
    await Promise.all([replica(), replica(), replica(), publishes()]);
    expect(startOrder).toEqual(fireTimes);
  }, 60_000);

  /** Records the fires started, as a batch does before it commits. */
  async function startedInTransaction(manager: EntityManager, fires: readonly PendingFire[]): Promise<void> {
    for (const fire of fires) {
      await recordFireOutcome(manager, {
        projectId: fire.schedule.projectId,
        scheduleId: fire.schedule.scheduleId,
        scheduledTime: fire.scheduledTime,
        startedAt: new Date(),
        invocationId: randomUUID(),
        runStatus: 'QUEUED',
        reason: null,
      });
    }
  }
});
