import { randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';
import type { TransactionRunner } from '@runline/db';
import { forgetStarts, pickStarts, queuedStartCount, queueStarts } from '../src/runs/start-queue.repository.js';
import { openInvocationDatabase } from './support/invocation-database.js';

/** The fair start queue on a real PostgreSQL (DESIGN section 13, fairness between projects). */
describe('the fair start queue', () => {
  let close: (() => Promise<void>) | undefined;
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
      await forgetStarts(dataSource.manager, [next.invocationId]);
    }
  };

  beforeAll(async () => {
    ({ dataSource, transactions, close } = await openInvocationDatabase());
  });

  afterAll(async () => {
    await close?.();
  });

  afterEach(async () => {
    await dataSource.query('DELETE FROM start_queue');
  });

  it("starts a project's run that arrives behind another project's backlog next, not after the backlog", async () => {
    await queueStarts(transactions, Array.from({ length: 50 }, (_, n) => runOf(projectA, `a${n}`)));
    // Two of A's runs start; then B's first run arrives.
    const first = await pickStarts(dataSource.manager, 2, 60_000);
    expect(first.map((run) => names.get(run.invocationId))).toEqual(['a0', 'a1']);
    await forgetStarts(dataSource.manager, first.map((run) => run.invocationId));
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
});
