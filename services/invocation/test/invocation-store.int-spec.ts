import { randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { createServiceDataSource, GroupCommit, TransactionRunner } from '@runline/db';
import { migrateServices } from '@runline/runtime';
import { createTestDatabase, type TestDatabase } from '@runline/testing';
import type { RequestInfo } from '../src/events/invocation-event.js';
import { invocationService } from '../src/invocation.service.js';
import {
  insertInvocations,
  readDocument,
  readKnownInvocation,
  transition,
  transitionKnown,
  type InsertOutcome,
  type NewInvocation,
} from '../src/runs/invocation-store.js';

const request: RequestInfo = {
  targetType: 'FLOW',
  mode: 'ASYNC',
  triggerSource: 'WEBHOOK',
  environment: 'PRODUCTION',
  requestPayload: {},
  enrollmentPolicy: 'ONE_TIME',
  onErrorPolicy: 'ABORT',
  startedByTokenId: null,
  definitionVersion: 1,
  sessionId: null,
  maxAttempts: 1,
};

/** The invocation write side on a real PostgreSQL: idempotency under concurrency, guarded transitions. */
describe('invocation store', () => {
  let database: TestDatabase;
  let dataSource: DataSource;
  let transactions: TransactionRunner;
  const projectId = randomUUID();

  const newRun = (key: string | null): NewInvocation => ({
    id: randomUUID(),
    orgId: randomUUID(),
    projectId,
    targetType: 'FLOW',
    mode: 'ASYNC',
    status: 'QUEUED',
    attempt: 0,
    maxAttempts: 1,
    waitingJob: null,
    lease: null,
    sealedPlan: 'sealed',
    occurredAt: new Date(),
    events: [{ type: 'InvocationQueued', request }],
    idempotency: key === null ? null : { projectId, targetType: 'FLOW', mode: 'ASYNC', key },
    messages: [],
  });
  const count = async (table: string) => Number((await dataSource.query(`SELECT count(*) AS n FROM ${table}`))[0].n);

  beforeAll(async () => {
    database = await createTestDatabase();
    await migrateServices([invocationService], database.url);
    dataSource = createServiceDataSource({ url: database.url, schema: 'invocation', entities: [], migrations: [] });
    await dataSource.initialize();
    transactions = new TransactionRunner(dataSource, { notify: () => undefined });
  });
  afterAll(async () => {
    await dataSource?.destroy();
    await database?.drop();
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
