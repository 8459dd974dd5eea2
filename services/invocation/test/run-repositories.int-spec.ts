import { randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { GroupCommit, type TransactionContext, type TransactionRunner } from '@runline/db';
import { insertInvocations, insertInvocationsAtOnce, type InsertOutcome, type NewInvocation } from '../src/runs/new-runs.repository.js';
import { expiredLeases, readDocument, readKnownInvocation } from '../src/runs/run-reads.repository.js';
import { RunRecorder } from '../src/runs/run-recorder.js';
import type { InvocationEventData } from '../src/lifecycle/invocation-event.js';
import { historyAppend } from '../src/lifecycle/run-history.js';
import type { Expectation, StateChange } from '../src/lifecycle/run-lifecycle.js';
import { transition as transitionWith, transitionKnown as transitionKnownWith, transitionKnownBatch, transitionMany, type KnownRun } from '../src/runs/run-transitions.repository.js';
import { openInvocationDatabase } from './support/invocation-database.js';
import { newQueuedRun } from './support/queued-runs.js';

// The repositories take the history the lifecycle core prepares; these tests give the events.
const transition = (tx: TransactionContext, id: string, expected: Expectation, change: StateChange, events: InvocationEventData[]) =>
  transitionWith(tx, id, expected, change, historyAppend({ change, events }));
const transitionKnown = (runner: TransactionRunner, known: KnownRun, expected: Expectation, change: StateChange, events: InvocationEventData[]) =>
  transitionKnownWith(runner, known, expected, change, historyAppend({ change, events }));

/** The invocation write side on a real PostgreSQL: idempotency under concurrency, guarded transitions. */
describe('run repositories', () => {
  let close: (() => Promise<void>) | undefined;
  let dataSource: DataSource;
  let transactions: TransactionRunner;
  const projectId = randomUUID();
  /** What the runner handed the relay after each commit. */
  const notified: Array<{ id: string }> = [];

  const newRun = (key: string | null): NewInvocation => newQueuedRun(projectId, { key });
  const count = async (table: string) => Number((await dataSource.query(`SELECT count(*) AS n FROM ${table}`))[0].n);

  beforeAll(async () => {
    ({ dataSource, transactions, close } = await openInvocationDatabase((messages) => notified.push(...messages)));
  });
  beforeEach(() => {
    notified.length = 0;
  });
  afterAll(async () => {
    await close?.();
  });

  it('records one run per idempotency key, within a batch and across concurrent transactions', async () => {
    const key = `k-${randomUUID()}`;
    const commit = new GroupCommit<NewInvocation, InsertOutcome>((items) => transactions.run((tx) => insertInvocations(tx, items)), 4, 8);
    const before = await count('invocations');
    const outcomes = await Promise.all(Array.from({ length: 50 }, () => commit.submit(newRun(key))));
    const created = outcomes.filter((outcome) => outcome.created);
    expect(created).toHaveLength(1);
    const winner = created[0]!.created ? created[0]!.document.invocationId : '';
    for (const outcome of outcomes) if (!outcome.created) expect(outcome.existingId).toBe(winner);
    expect(await count('invocations')).toBe(before + 1);
    // Each recorded run has its first event, its read model and its outbox message.
    expect(await count('invocation_views')).toBe(before + 1);
    expect(await count('invocation_events')).toBe(before + 1);
  });

  it('records every run of a batch without keys, with its read model and outbox rows', async () => {
    const outboxBefore = await count('outbox');
    const runs = Array.from({ length: 20 }, () => newRun(null));
    const outcomes = await transactions.run((tx) => insertInvocations(tx, runs));
    expect(outcomes.every((outcome) => outcome.created)).toBe(true);
    expect(await count('outbox')).toBe(outboxBefore + 20);
    const document = await readDocument(dataSource.manager, runs[0]!.id);
    expect(document).toMatchObject({ invocationId: runs[0]!.id, status: 'QUEUED', mode: 'ASYNC', targetType: 'FLOW' });
  });

  it('applies a transition only while the run is as expected, so two claims never both win', async () => {
    const run = newRun(null);
    await transactions.run((tx) => insertInvocations(tx, [run]));
    const claim = (owner: string) =>
      transactions.run((tx) =>
        transition(tx, run.id, { status: 'QUEUED', dispatched: true }, { status: 'RUNNING', attempt: 1, lease: { owner, expiresAt: new Date(Date.now() + 10_000) } }, [
          { type: 'InvocationStarted', attempt: 1 },
        ]),
      );
    const [first, second] = await Promise.all([claim('a'), claim('b')]);
    expect([first, second].filter((document) => document !== null)).toHaveLength(1);
    // Only the lease holder may finish it.
    const finish = (owner: string) =>
      transactions.run((tx) =>
        transition(tx, run.id, { status: 'RUNNING', leaseOwner: owner }, { status: 'SUCCEEDED', lease: null }, [
          { type: 'InvocationSucceeded', result: 1, steps: [], trace: null, durationMs: 1 },
        ]),
      );
    const holder = first ? 'a' : 'b';
    expect(await finish(holder === 'a' ? 'b' : 'a')).toBeNull();
    expect(await finish(holder)).toMatchObject({ status: 'SUCCEEDED', result: 1, attempts: 1 });
    const events: Array<{ sequence: number; type: string }> = await dataSource.query(
      'SELECT sequence, type FROM invocation_events WHERE invocation_id = $1 ORDER BY sequence',
      [run.id],
    );
    expect(events).toEqual([
      { sequence: 1, type: 'InvocationQueued' },
      { sequence: 2, type: 'InvocationStarted' },
      { sequence: 3, type: 'InvocationSucceeded' },
    ]);
  });

  it('finds RUNNING runs whose lease expired, except those the asking process is executing', async () => {
    const past = new Date(Date.now() - 60_000);
    const running = (owner: string, expiresAt: Date): NewInvocation => ({ ...newRun(null), status: 'RUNNING', attempt: 1, lease: { owner, expiresAt } });
    const executingHere = running('me', past);
    const orphanedHere = running('me', past);
    const otherProcess = running('other', past);
    const notExpired = running('other', new Date(Date.now() + 60_000));
    await transactions.run((tx) => insertInvocations(tx, [executingHere, orphanedHere, otherProcess, notExpired]));

    const alive = { owner: 'me', executing: [executingHere.id, otherProcess.id] };
    const found = await transactions.run((tx) => expiredLeases(tx.manager, 100, alive));
    const ids = new Set(found.map((row) => row.id));
    // Another process's run is swept even when its id is in our list: only the owner is alive here.
    expect([orphanedHere.id, otherProcess.id].every((id) => ids.has(id))).toBe(true);
    expect(ids.has(executingHere.id)).toBe(false);
    expect(ids.has(notExpired.id)).toBe(false);
    // With nothing executing, the process's own expired runs are all found.
    const all = await transactions.run((tx) => expiredLeases(tx.manager, 100, { owner: 'me', executing: [] }));
    expect(all.map((row) => row.id)).toEqual(expect.arrayContaining([executingHere.id, orphanedHere.id, otherProcess.id]));
  });

  describe('insertInvocationsAtOnce (a batch in one statement)', () => {
    const outboxIdsOf = async (ids: string[]) =>
      (
        await dataSource.query<Array<{ id: string }>>(
          `SELECT o.id FROM outbox o JOIN invocation_events e ON e.id::text = o.id WHERE e.invocation_id = ANY($1::uuid[]) ORDER BY o.sequence`,
          [ids],
        )
      ).map((row) => row.id);

    it('records runs, events, read models and outbox rows, and hands the relay exactly what it wrote', async () => {
      const runs = [newRun(null), newRun(`k-${randomUUID()}`), newRun(null)];
      const written = await insertInvocationsAtOnce(transactions, runs);
      expect('outcomes' in written && written.outcomes.every((outcome) => outcome.created)).toBe(true);
      const ids = runs.map((run) => run.id);
      const states = await dataSource.query('SELECT id, status, sequence FROM invocations WHERE id = ANY($1::uuid[]) ORDER BY id', [ids]);
      expect(states).toEqual([...ids].sort().map((id) => ({ id, status: 'QUEUED', sequence: 1 })));
      expect(await readDocument(dataSource.manager, runs[1]!.id)).toMatchObject({ invocationId: runs[1]!.id, status: 'QUEUED' });
      const outbox = await outboxIdsOf(ids);
      expect(outbox).toHaveLength(3);
      expect(notified.map((message) => message.id)).toEqual(outbox);
    });

    it('answers a key already taken (earlier, or twice in the batch) with the run that holds it, and writes nothing of the loser', async () => {
      const key = `k-${randomUUID()}`;
      const [earlier] = [newRun(key)];
      await insertInvocationsAtOnce(transactions, [earlier!]);
      notified.length = 0;
      const late = newRun(key);
      const fresh = `k-${randomUUID()}`;
      const twins = [newRun(fresh), newRun(fresh)];
      const written = await insertInvocationsAtOnce(transactions, [late, ...twins]);
      if (!('outcomes' in written)) throw new Error('expected outcomes');
      expect(written.outcomes[0]).toEqual({ created: false, existingId: earlier!.id });
      expect(written.outcomes[1]).toMatchObject({ created: true });
      expect(written.outcomes[2]).toEqual({ created: false, existingId: twins[0]!.id });
      const losers = [late.id, twins[1]!.id];
      expect(Number((await dataSource.query('SELECT count(*) AS n FROM invocations WHERE id = ANY($1::uuid[])', [losers]))[0].n)).toBe(0);
      expect(Number((await dataSource.query('SELECT count(*) AS n FROM invocation_views WHERE id = ANY($1::uuid[])', [losers]))[0].n)).toBe(0);
      expect(await outboxIdsOf(losers)).toEqual([]);
      expect(notified.map((message) => message.id)).toEqual(await outboxIdsOf([twins[0]!.id]));
    });

    it('records one run per key across concurrent statements', async () => {
      const key = `k-${randomUUID()}`;
      const commit = new GroupCommit<NewInvocation, InsertOutcome>(async (items) => {
        const written = await insertInvocationsAtOnce(transactions, items);
        if (!('outcomes' in written)) throw new Error('no quota expected');
        return written.outcomes;
      }, 4, 8);
      const outcomes = await Promise.all(Array.from({ length: 50 }, () => commit.submit(newRun(key))));
      const created = outcomes.filter((outcome) => outcome.created);
      expect(created).toHaveLength(1);
      const winner = created[0]!.created ? created[0]!.document.invocationId : '';
      for (const outcome of outcomes) if (!outcome.created) expect(outcome.existingId).toBe(winner);
    });

    it('writes nothing and names the organizations with a monthly quota, whose runs are counted in a transaction', async () => {
      const bound = newRun(`k-${randomUUID()}`);
      const free = newRun(null);
      await dataSource.query(
        `INSERT INTO organization_copies (org_id, monthly_quota, renewal_day, plan_changed_at) VALUES ($1, 10, NULL, clock_timestamp())`,
        [bound.orgId],
      );
      const before = { runs: await count('invocations'), keys: await count('idempotency_keys'), outbox: await count('outbox') };
      expect(await insertInvocationsAtOnce(transactions, [free, bound])).toEqual({ quotaBound: [bound.orgId] });
      expect({ runs: await count('invocations'), keys: await count('idempotency_keys'), outbox: await count('outbox') }).toEqual(before);
      expect(notified).toEqual([]);
    });
  });

  describe('transitionKnown (one statement for a run this process knows as it is)', () => {
    const lease = (owner: string) => ({ owner, expiresAt: new Date(Date.now() + 10_000) });
    const started = { type: 'InvocationStarted' as const, attempt: 1 };
    const succeeded = { type: 'InvocationSucceeded' as const, result: 7, steps: [], trace: null, durationMs: 1 };
    const stored = async (id: string) => ({
      state: (await dataSource.query('SELECT status, sequence, lease_owner FROM invocations WHERE id = $1', [id]))[0],
      events: (await dataSource.query('SELECT sequence, type FROM invocation_events WHERE invocation_id = $1 ORDER BY sequence', [id])).map(
        (row: { sequence: number; type: string }) => `${row.sequence}:${row.type}`,
      ),
      view: await readDocument(dataSource.manager, id),
      outbox: Number((await dataSource.query(`SELECT count(*) AS n FROM outbox WHERE data IS NOT NULL AND headers IS NOT NULL AND id IN (SELECT id::text FROM invocation_events WHERE invocation_id = $1)`, [id]))[0].n),
    });

    it('writes state, events, read model and outbox together, and chains claim and end', async () => {
      const run = newRun(null);
      await transactions.run((tx) => insertInvocations(tx, [run]));
      const read = await readKnownInvocation(dataSource.manager, run.id);
      expect(read?.known).toMatchObject({ id: run.id, sequence: 1 });
      const claimed = await transitionKnown(transactions, read!.known!, { status: 'QUEUED', dispatched: true }, { status: 'RUNNING', attempt: 1, lease: lease('a') }, [started]);
      expect(claimed?.known?.sequence).toBe(2);
      const ended = await transitionKnown(transactions, claimed!.known!, { status: 'RUNNING', leaseOwner: 'a' }, { status: 'SUCCEEDED', lease: null }, [succeeded]);
      expect(ended?.document).toMatchObject({ status: 'SUCCEEDED', result: 7, attempts: 1 });
      const after = await stored(run.id);
      expect(after.state).toEqual({ status: 'SUCCEEDED', sequence: 3, lease_owner: null });
      expect(after.events).toEqual(['1:InvocationQueued', '2:InvocationStarted', '3:InvocationSucceeded']);
      // The read model is what was folded in memory, and every event is in the outbox.
      expect(after.view).toEqual(ended!.document);
      expect(after.outbox).toBe(3);
    });

    it('claims and ends many runs per statement, each under its own expectations, in order for one run', async () => {
      const runs = [newRun(null), newRun(null), newRun(null), newRun(null)];
      await transactions.run((tx) => insertInvocations(tx, runs));
      const known = await Promise.all(runs.map(async (run) => (await readKnownInvocation(dataSource.manager, run.id))!.known!));
      // The third is claimed by another process meanwhile: its claim in the batch must not apply.
      await transactions.run((tx) => transition(tx, runs[2]!.id, { status: 'QUEUED' }, { status: 'RUNNING', attempt: 1, lease: lease('b') }, [started]));
      const claim = (run: KnownRun) => {
        const change: StateChange = { status: 'RUNNING', attempt: 1, lease: lease('a') };
        return { known: run, expected: { status: 'QUEUED' as const, dispatched: true }, change, history: historyAppend({ change, events: [started] }) };
      };
      notified.length = 0;
      const claims = await transitionKnownBatch(transactions, known.map(claim));
      expect(claims.map((outcome) => outcome?.known?.sequence ?? null)).toEqual([2, 2, null, 2]);
      // Only what was written was handed to the relay: one InvocationStarted per claimed run.
      expect(notified).toHaveLength(3);

      // Ends of two runs, and a claim and an end of the same run in one batch: applied in order.
      const end = (run: KnownRun, owner: string) => {
        const change: StateChange = { status: 'SUCCEEDED', lease: null };
        return { known: run, expected: { status: 'RUNNING' as const, leaseOwner: owner }, change, history: historyAppend({ change, events: [succeeded] }) };
      };
      const ends = await transitionKnownBatch(transactions, [end(claims[0]!.known!, 'a'), end(claims[1]!.known!, 'b'), end(claims[3]!.known!, 'a')]);
      expect(ends.map((outcome) => outcome?.document.status ?? null)).toEqual(['SUCCEEDED', null, 'SUCCEEDED']);
      const after = await Promise.all(runs.map((run) => stored(run.id)));
      expect(after.map((one) => one.state.status)).toEqual(['SUCCEEDED', 'RUNNING', 'RUNNING', 'SUCCEEDED']);
      expect(after[0]!.events).toEqual(['1:InvocationQueued', '2:InvocationStarted', '3:InvocationSucceeded']);
      expect(after[1]!.events).toEqual(['1:InvocationQueued', '2:InvocationStarted']);
      expect(after[3]!.view).toEqual(ends[2]!.document);
      expect(after[3]!.outbox).toBe(3);

      const fifth = newRun(null);
      await transactions.run((tx) => insertInvocations(tx, [fifth]));
      const read = (await readKnownInvocation(dataSource.manager, fifth.id))!.known!;
      const [claimed] = await transitionKnownBatch(transactions, [claim(read)]);
      const both = await transitionKnownBatch(transactions, [end(claimed!.known!, 'a'), end(claimed!.known!, 'a')]);
      // The second end of the same run sees the run ended by the first and writes nothing.
      expect(both.map((outcome) => outcome?.document.status ?? null)).toEqual(['SUCCEEDED', null]);
      expect((await stored(fifth.id)).events).toEqual(['1:InvocationQueued', '2:InvocationStarted', '3:InvocationSucceeded']);
    });

    it('transitionMany: many runs in one transaction, each under its own expectations, in order for one run', async () => {
      const runs = [newRun(null), newRun(null), newRun(null), newRun(null)];
      await transactions.run((tx) => insertInvocations(tx, runs));
      // The third is claimed by another process first: its claim here must not apply.
      await transactions.run((tx) => transition(tx, runs[2]!.id, { status: 'QUEUED' }, { status: 'RUNNING', attempt: 1, lease: lease('b') }, [started]));
      const claim = (id: string) => {
        const change: StateChange = { status: 'RUNNING', attempt: 1, lease: lease('a') };
        return { invocationId: id, expected: { status: 'QUEUED' as const, dispatched: true }, change, history: historyAppend({ change, events: [started] }) };
      };
      const end = (id: string, owner: string) => {
        const change: StateChange = { status: 'SUCCEEDED', lease: null };
        return { invocationId: id, expected: { status: 'RUNNING' as const, leaseOwner: owner }, change, history: historyAppend({ change, events: [succeeded] }) };
      };
      notified.length = 0;
      // The first run is claimed and ended in one call: the end applies after the claim.
      const written = await transactions.run((tx) => transitionMany(tx, [...runs.map((run) => claim(run.id)), end(runs[0]!.id, 'a'), end(runs[1]!.id, 'b')]));
      expect(written.map((run) => run?.document.status ?? null)).toEqual(['RUNNING', 'RUNNING', null, 'RUNNING', 'SUCCEEDED', null]);
      expect(written.map((run) => run?.sequence ?? null)).toEqual([2, 2, null, 2, 3, null]);
      // Only what was written was handed to the relay: three InvocationStarted and one InvocationSucceeded.
      expect(notified).toHaveLength(4);
      const after = await Promise.all(runs.map((run) => stored(run.id)));
      expect(after.map((one) => one.state)).toEqual([
        { status: 'SUCCEEDED', sequence: 3, lease_owner: null },
        { status: 'RUNNING', sequence: 2, lease_owner: 'a' },
        { status: 'RUNNING', sequence: 2, lease_owner: 'b' },
        { status: 'RUNNING', sequence: 2, lease_owner: 'a' },
      ]);
      expect(after[0]!.events).toEqual(['1:InvocationQueued', '2:InvocationStarted', '3:InvocationSucceeded']);
      expect(after[3]!.events).toEqual(['1:InvocationQueued', '2:InvocationStarted']);
      // Each read model is the document folded from the one before it, and every event is in the outbox.
      expect(after[0]!.view).toEqual(written[4]!.document);
      expect(after[3]!.view).toEqual(written[3]!.document);
      expect(after.map((one) => one.outbox)).toEqual([3, 2, 2, 2]);
    });

    it('through the recorder: a run whose ending the database refuses does not fail the others of its batch', async () => {
      const recorder = new RunRecorder(transactions);
      recorder.onModuleInit();
      const runs = [newRun(null), newRun(null), newRun(null), newRun(null)];
      await transactions.run((tx) => insertInvocations(tx, runs));
      const claimed = await Promise.all(
        runs.map(async (run) => {
          const known = (await readKnownInvocation(dataSource.manager, run.id))!.known!;
          const change: StateChange = { status: 'RUNNING', attempt: 1, lease: lease('a') };
          return (await recorder.transitionKnown({ known, expected: { status: 'QUEUED', dispatched: true }, change, history: historyAppend({ change, events: [started] }) }))!.known!;
        }),
      );
      const end = (known: KnownRun, result: unknown) => {
        const change: StateChange = { status: 'SUCCEEDED', lease: null };
        return recorder.transitionKnown({
          known,
          expected: { status: 'RUNNING', leaseOwner: 'a' },
          change,
          history: historyAppend({ change, events: [{ ...succeeded, result: result as number }] }),
        });
      };
      // Two transactions at once: the first two go alone, the last two share one statement.
      const ends = await Promise.allSettled([end(claimed[0]!, 1), end(claimed[1]!, 2), end(claimed[2]!, 'nul \u0000 byte'), end(claimed[3]!, 4)]);
      expect(ends.map((outcome) => outcome.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'fulfilled']);
      const after = await Promise.all(runs.map((run) => stored(run.id)));
      expect(after.map((one) => one.state.status)).toEqual(['SUCCEEDED', 'SUCCEEDED', 'RUNNING', 'SUCCEEDED']);
    });

    it('writes nothing when the expectation fails, and falls back to a transaction when the run changed since it was read', async () => {
      const run = newRun(null);
      await transactions.run((tx) => insertInvocations(tx, [run]));
      const stale = (await readKnownInvocation(dataSource.manager, run.id))!.known!;
      // Another process claims it meanwhile.
      await transactions.run((tx) => transition(tx, run.id, { status: 'QUEUED' }, { status: 'RUNNING', attempt: 1, lease: lease('b') }, [started]));
      expect(await transitionKnown(transactions, stale, { status: 'QUEUED' }, { status: 'RUNNING', attempt: 1, lease: lease('a') }, [started])).toBeNull();
      // Holding an old sequence, the end still applies through the fallback, on the run as it is now.
      const ended = await transitionKnown(transactions, stale, { status: 'RUNNING', leaseOwner: 'b' }, { status: 'SUCCEEDED', lease: null }, [succeeded]);
      expect(ended).toMatchObject({ known: null, document: { status: 'SUCCEEDED', attempts: 1 } });
      const after = await stored(run.id);
      expect(after.events).toEqual(['1:InvocationQueued', '2:InvocationStarted', '3:InvocationSucceeded']);
      expect(after.state).toMatchObject({ status: 'SUCCEEDED', sequence: 3 });
    });
  });
});
