import { randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { createServiceDataSource, TransactionRunner } from '@runline/db';
import { migrateServices } from '@runline/runtime';
import { createTestDatabase, type TestDatabase } from '@runline/testing';
import { invocationService } from '../src/invocation.service.js';
import { forgetStarts, pickStarts, queuedStartCount, queueStarts, type JobWait, type QueuedStart } from '../src/runs/start-queue.repository.js';

/** The fair start queue on a real PostgreSQL (DESIGN section 13, fairness between projects). */
describe('the fair start queue', () => {
  let database: TestDatabase;
  let dataSource: DataSource;
  let transactions: TransactionRunner;
  const projectA = randomUUID();
  const projectB = randomUUID();
  const projectC = randomUUID();
  const names = new Map<string, string>();
  const runOf = (projectId: string, name: string) => {
    const invocationId = randomUUID();
    names.set(invocationId, name);
    return { invocationId, projectId };
  };
  /** Takes runs one at a time, as freed run slots do, and names them in the order taken. */
  const takeAll = async (leaseMs = 60_000) => {
    const taken: string[] = [];
    for (;;) {
      const [next] = await pickStarts(dataSource.manager, 1, leaseMs);
      if (!next) return taken;
      taken.push(names.get(next.invocationId)!);
      await forgetStarts(dataSource.manager, [next]);
    }
  };

  beforeAll(async () => {
    database = await createTestDatabase();
    await migrateServices([invocationService], database.url);
    dataSource = createServiceDataSource({ url: database.url, schema: 'invocation', migrations: [] });
    await dataSource.initialize();
    transactions = new TransactionRunner(dataSource, { notify: () => undefined });
  });

  afterAll(async () => {
    await dataSource?.destroy();
    await database?.drop();
  });

  afterEach(async () => {
    await dataSource.query('DELETE FROM start_queue');
    await dataSource.query('DELETE FROM invocations');
  });

  /** A run's state row, waiting in `status` for `waitingJob` (what a queued start is checked against). */
  const waitingRun = async (projectId: string, status: JobWait['status'], waitingJob: string | null) => {
    const invocationId = randomUUID();
    await dataSource.query(
      `INSERT INTO invocations (id, org_id, project_id, target_type, mode, status, sequence, sealed_plan, waiting_job)
       VALUES ($1, $2, $3, 'AUTOMATION', 'ASYNC', $4, 1, 'sealed', $5)`,
      [invocationId, randomUUID(), projectId, status, waitingJob],
    );
    return invocationId;
  };

  it("starts a project's run that arrives behind another project's backlog next, not after the backlog", async () => {
    await queueStarts(transactions, Array.from({ length: 50 }, (_, n) => runOf(projectA, `a${n}`)));
    // Two of A's runs start; then B's first run arrives.
    const first = await pickStarts(dataSource.manager, 2, 60_000);
    expect(first.map((run) => names.get(run.invocationId))).toEqual(['a0', 'a1']);
    await forgetStarts(dataSource.manager, first);
    await queueStarts(transactions, [runOf(projectB, 'b0')]);

    const taken = await takeAll();

    expect(taken.slice(0, 2)).toEqual(['a2', 'b0']);
    expect(taken).toHaveLength(49);
  });

  it('lets projects with runs waiting take turns, each in its own arrival order', async () => {
    await queueStarts(transactions, [...['a0', 'a1', 'a2', 'a3'].map((name) => runOf(projectA, name)), ...['b0', 'b1'].map((name) => runOf(projectB, name))]);
    await queueStarts(transactions, [runOf(projectC, 'c0'), runOf(projectA, 'a4')]);

    expect(await takeAll()).toEqual(['a0', 'b0', 'c0', 'a1', 'b1', 'a2', 'a3', 'a4']);
  });

  it('numbers the runs of one project queued by two replicas at once one after the other', async () => {
    const batches = [0, 1, 2, 3].map((batch) => Array.from({ length: 25 }, (_, n) => runOf(projectA, `a${batch}-${n}`)));
    await Promise.all(batches.map((batch) => queueStarts(transactions, batch)));
    const tags = (await dataSource.query(`SELECT tag FROM start_queue ORDER BY tag`)) as Array<{ tag: string }>;

    expect(new Set(tags.map((row) => row.tag)).size).toBe(100);
  });

  it('gives a run to one replica only, and to another once its pick lapsed (the replica that took it died)', async () => {
    const run = runOf(projectA, 'a0');
    await queueStarts(transactions, [run]);

    // A pick of 2 s: long enough for the next pick to come within it on a busy machine.
    const [firstReplica, secondReplica] = await Promise.all([pickStarts(dataSource.manager, 5, 2000), pickStarts(dataSource.manager, 5, 2000)]);
    expect([...firstReplica, ...secondReplica].map((taken) => taken.invocationId)).toEqual([run.invocationId]);
    expect(await pickStarts(dataSource.manager, 5, 2000)).toEqual([]);

    await new Promise((resolve) => setTimeout(resolve, 2100));
    expect((await pickStarts(dataSource.manager, 5, 2000)).map((taken) => taken.invocationId)).toEqual([run.invocationId]);
    expect(await queuedStartCount(dataSource.manager)).toBe(1);
  });

  it('keeps a run queued once, however often its command is delivered', async () => {
    const run = runOf(projectA, 'a0');
    await queueStarts(transactions, [run]);
    await queueStarts(transactions, [run]);

    expect(await queuedStartCount(dataSource.manager)).toBe(1);
  });

  describe('starts of fired scheduler jobs', () => {
    it('carries what the start expects (status, job, due time) through the queue, and gives it out only once due', async () => {
      const dueAt = new Date(Date.now() + 60_000);
      const scheduled: QueuedStart = { ...runOf(projectA, 'scheduled'), job: { status: 'SCHEDULED', waitingJob: 'run-x', dueAt } };
      const retry: QueuedStart = { ...runOf(projectA, 'retry'), job: { status: 'QUEUED', waitingJob: 'retry-x-2', dueAt: new Date(Date.now() - 1000) } };
      const resume: QueuedStart = { ...runOf(projectB, 'resume'), job: { status: 'SUSPENDED', waitingJob: 'resume-x-3', dueAt: null } };
      const queued = runOf(projectB, 'queued');
      await queueStarts(transactions, [scheduled, retry, resume, queued]);

      // Before the scheduled run's time: everything else, each with its expectation.
      const early = await pickStarts(dataSource.manager, 10, 60_000);
      // In the fair order: B's first run in the round of A's first (not due yet), then the second round.
      expect(early).toEqual([
        { invocationId: resume.invocationId, projectId: projectB, job: resume.job },
        { invocationId: retry.invocationId, projectId: projectA, job: retry.job },
        { invocationId: queued.invocationId, projectId: projectB, job: null },
      ]);
      expect(await pickStarts(dataSource.manager, 10, 60_000, new Date(dueAt.getTime() - 1))).toEqual([]);

      expect(await pickStarts(dataSource.manager, 10, 60_000, dueAt)).toEqual([{ invocationId: scheduled.invocationId, projectId: projectA, job: scheduled.job }]);
    });

    it('gives a fired start whose replica died to another replica with its expectation, once its pick lapsed', async () => {
      const start: QueuedStart = { ...runOf(projectA, 'scheduled'), job: { status: 'SCHEDULED', waitingJob: 'run-y', dueAt: new Date(Date.now() - 10) } };
      await queueStarts(transactions, [start]);

      const [taken] = await pickStarts(dataSource.manager, 5, 1000);
      expect(taken).toEqual({ invocationId: start.invocationId, projectId: projectA, job: start.job });
      expect(await pickStarts(dataSource.manager, 5, 1000)).toEqual([]);

      await new Promise((resolve) => setTimeout(resolve, 1100));
      expect(await pickStarts(dataSource.manager, 5, 1000)).toEqual([taken]);
    });

    it("replaces a run's start by its next job only while the run waits for that job, and forgets a start only as it was taken", async () => {
      // The run's first retry was taken and started; the run failed again and waits for its second retry.
      const invocationId = await waitingRun(projectA, 'QUEUED', 'retry-z-2');
      names.set(invocationId, 'z');
      const firstRetry: QueuedStart = { invocationId, projectId: projectA, job: { status: 'QUEUED', waitingJob: 'retry-z-1', dueAt: null } };
      await queueStarts(transactions, [firstRetry, runOf(projectA, 'a0')]);
      const [takenFirst] = await pickStarts(dataSource.manager, 1, 60_000);
      expect(takenFirst?.job?.waitingJob).toBe('retry-z-1');

      // Its second retry fires before the first one's row is forgotten: it replaces that row.
      const secondRetry: QueuedStart = { invocationId, projectId: projectA, job: { status: 'QUEUED', waitingJob: 'retry-z-2', dueAt: null } };
      await queueStarts(transactions, [secondRetry]);
      await forgetStarts(dataSource.manager, [takenFirst!]);
      // Late copies of earlier messages (the first retry's job, the run's RunInvocation) replace nothing.
      await queueStarts(transactions, [firstRetry, { invocationId, projectId: projectA }]);

      const rows = (await dataSource.query(`SELECT waiting_job, expected_status, picked_until FROM start_queue WHERE invocation_id = $1`, [invocationId])) as unknown[];
      expect(rows).toEqual([{ waiting_job: 'retry-z-2', expected_status: 'QUEUED', picked_until: null }]);
      // Queued anew, behind the project's run that was waiting already.
      const taken = await pickStarts(dataSource.manager, 5, 60_000);
      expect(taken.map((run) => [names.get(run.invocationId), run.job?.waitingJob ?? null])).toEqual([
        ['a0', null],
        ['z', 'retry-z-2'],
      ]);
      await forgetStarts(dataSource.manager, taken);
      expect(await queuedStartCount(dataSource.manager)).toBe(0);
    });

    it('keeps one row for two starts of one run in one batch, the one the run waits for', async () => {
      const invocationId = await waitingRun(projectA, 'SUSPENDED', 'resume-w-4');
      const stale: QueuedStart = { invocationId, projectId: projectA, job: { status: 'SUSPENDED', waitingJob: 'resume-w-2', dueAt: null } };
      const current: QueuedStart = { invocationId, projectId: projectA, job: { status: 'SUSPENDED', waitingJob: 'resume-w-4', dueAt: null } };
      await queueStarts(transactions, [stale, current, stale, current]);

      expect(await pickStarts(dataSource.manager, 5, 60_000)).toEqual([current]);
    });
  });
});
