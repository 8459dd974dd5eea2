import { ORG_ID, PROJECT_ID, SchedulerHarness, until } from './scheduler-harness.js';

/** Ended jobs are deleted after SCHEDULER_RETENTION_DAYS; waiting and recent ones stay. */
describe('scheduler retention', () => {
  let harness: SchedulerHarness;

  beforeAll(async () => {
    harness = await SchedulerHarness.create({ SCHEDULER_RETENTION_DAYS: '30', SCHEDULER_PRUNE_INTERVAL_MS: '200' });
  }, 30_000);

  afterAll(async () => {
    await harness?.close();
  }, 30_000);

  /** Inserts a job row as it would be after `endedDaysAgo` (null: still waiting). */
  const job = (name: string, status: 'SCHEDULED' | 'FIRED' | 'CANCELLED', daysAgo: number, dueAt: string | null) =>
    harness.query(
      `INSERT INTO scheduler.scheduled_jobs (name, kind, invocation_id, org_id, project_id, due_at, status, created_at, updated_at, fired_at, cancelled_at)
       SELECT $1, 'START_RUN', gen_random_uuid(), $2, $3, $4::timestamptz, $5::text, t, t,
              CASE WHEN $5::text = 'FIRED' THEN t END, CASE WHEN $5::text = 'CANCELLED' THEN t END
         FROM (SELECT now() - make_interval(days => $6::int) AS t) AS ended`,
      [name, ORG_ID, PROJECT_ID, dueAt, status, daysAgo],
    );

  it('deletes jobs that fired or were cancelled more than 30 days ago, in batches, and keeps the rest', async () => {
    // More than one delete batch (1000) of old fired jobs.
    await harness.query(
      `INSERT INTO scheduler.scheduled_jobs (name, kind, invocation_id, org_id, project_id, due_at, status, created_at, updated_at, fired_at)
       SELECT 'old-fired-' || g, 'START_RUN', gen_random_uuid(), $1, $2, t, 'FIRED', t, t, t
         FROM generate_series(1, 2500) AS g, (SELECT now() - interval '40 days' AS t) AS ended`,
      [ORG_ID, PROJECT_ID],
    );
    await job('old-cancelled', 'CANCELLED', 31, new Date(Date.now() - 31 * 86_400_000).toISOString());
    await job('old-tombstone', 'CANCELLED', 45, null);
    await job('recent-fired', 'FIRED', 29, new Date(Date.now() - 29 * 86_400_000).toISOString());
    await job('recent-cancelled', 'CANCELLED', 1, null);
    // Waiting since long ago (scheduled a year ahead): never pruned, whatever its age.
    await job('old-waiting', 'SCHEDULED', 300, new Date(Date.now() + 65 * 86_400_000).toISOString());

    await harness.startReplica();
    await until(
      async () => Number((await harness.query(`SELECT count(*) AS n FROM scheduler.scheduled_jobs WHERE name LIKE 'old-%'`))[0]!.n) === 1,
      10_000,
      'the old ended jobs to go',
    );
    const left = await harness.query(`SELECT name, status FROM scheduler.scheduled_jobs ORDER BY name`);
    expect(left).toEqual([
      { name: 'old-waiting', status: 'SCHEDULED' },
      { name: 'recent-cancelled', status: 'CANCELLED' },
      { name: 'recent-fired', status: 'FIRED' },
    ]);
  }, 30_000);

  it('a job that fires now is kept (the retention counts from when it ended)', async () => {
    const name = `fires-now-${Date.now()}`;
    await harness.schedule(name, Date.now() + 100);
    await until(() => harness.firedCount(name) === 1, 5000, 'the job to fire');
    // Two prune rounds later it is still there: two jobs that ended 31 days ago, put in one
    // after the other, each gone (a round after it came), prove the rounds ran, whatever the
    // machine's speed.
    for (const round of [1, 2]) {
      const old = `${name}-old-${round}`;
      await job(old, 'FIRED', 31, new Date(Date.now() - 31 * 86_400_000).toISOString());
      await until(async () => (await harness.rows([old])).size === 0, 10_000, `a prune round (${round})`);
    }
    expect((await harness.rows([name])).get(name)?.status).toBe('FIRED');
  });
});
