import { randomUUID } from 'node:crypto';
import type { FlowRules } from '../src/lifecycle/flow-decision.js';
import { historyAppend } from '../src/lifecycle/run-history.js';
import { claimedStart } from '../src/lifecycle/run-lifecycle.js';
import type { TransactionContext } from '@runline/db';
import {
  earliestRetryInMs,
  gateStart as gateStartOf,
  gateStarts as gateStartsOf,
  nextWaitingStarts,
  type GateEntry,
  type GateOutcome,
  type GatedClaim,
} from '../src/runs/flow-gate.repository.js';
import { insertInvocations } from '../src/runs/new-runs.repository.js';
import { useInvocationDatabase } from './support/invocation-database.js';
import { newQueuedRun } from './support/queued-runs.js';

/**
 * Flow control's gate on a real PostgreSQL (DESIGN section 13): starts decided together in one
 * transaction (gateStarts) obey the limits as if decided one after the other, in rank order.
 */
describe("flow control's gate, several starts in one transaction", () => {
  const database = useInvocationDatabase();
  const projectId = randomUUID();
  // The outcomes alone; a started run's document is the transitions' own test's (run-repositories).
  const gateStarts = async (tx: TransactionContext, entries: readonly GateEntry[]) => (await gateStartsOf(tx, entries)).map((result) => result.outcome);
  const gateStart = async (tx: TransactionContext, claim: GatedClaim, rules: FlowRules) => (await gateStartOf(tx, claim, rules)).outcome;


  /** `count` QUEUED runs of the project, their ids in order. */
  const queuedRuns = async (count: number): Promise<string[]> => {
    const runs = Array.from({ length: count }, () => newQueuedRun(projectId));
    await database.transactions.run((tx) => insertInvocations(tx, runs));
    return runs.map((run) => run.id);
  };
  const entryOf = (invocationId: string, rules: FlowRules): GateEntry => {
    const claim = claimedStart({ id: invocationId, orgId: '', projectId, attempt: 0 }, { status: 'QUEUED' }, { owner: 'test', expiresAt: new Date(Date.now() + 60_000) });
    return { claim: { invocationId, projectId, expected: claim.expected, change: claim.change, history: (at) => historyAppend(claim, at) }, rules };
  };
  const concurrency = (slot: string, limit: number, rank: number): FlowRules => ({ slots: [{ kind: 'concurrency', slot, limit, key: 'k' }], rank });
  const statusOf = async (ids: string[]) =>
    ((await database.dataSource.query(`SELECT id, status FROM invocations WHERE id = ANY($1::uuid[])`, [ids])) as Array<{ id: string; status: string }>).reduce(
      (statuses, row) => statuses.set(row.id, row.status),
      new Map<string, string>(),
    );

  it('starts no more than the limit of a slot among the runs decided together, and records the others waiting', async () => {
    const slot = `c0:${randomUUID()}`;
    const ids = await queuedRuns(5);

    const outcomes = await database.transactions.run((tx) => gateStarts(tx, ids.map((id, n) => entryOf(id, concurrency(slot, 3, 1000 + n)))));

    expect(outcomes).toEqual<GateOutcome[]>(['started', 'started', 'started', 'waiting', 'waiting']);
    const statuses = await statusOf(ids);
    expect(ids.map((id) => statuses.get(id))).toEqual(['RUNNING', 'RUNNING', 'RUNNING', 'QUEUED', 'QUEUED']);
    const [holders] = (await database.dataSource.query(`SELECT count(*)::int AS n FROM flow_holders WHERE slot = $1`, [slot])) as Array<{ n: number }>;
    expect(holders!.n).toBe(3);
    const waits = (await database.dataSource.query(`SELECT invocation_id, reason FROM flow_waits WHERE slot = $1 ORDER BY rank`, [slot])) as Array<{ invocation_id: string; reason: string }>;
    expect(waits).toEqual([
      { invocation_id: ids[3], reason: 'concurrency' },
      { invocation_id: ids[4], reason: 'concurrency' },
    ]);
  });

  it('decides in rank order, whatever order the starts arrived in', async () => {
    const slot = `c0:${randomUUID()}`;
    const ids = await queuedRuns(4);
    const ranks = [4000, 1000, 3000, 2000];

    const outcomes = await database.transactions.run((tx) => gateStarts(tx, ids.map((id, n) => entryOf(id, concurrency(slot, 2, ranks[n]!)))));

    expect(outcomes).toEqual<GateOutcome[]>(['waiting', 'started', 'waiting', 'started']);
  });

  it('holds the runs decided together behind a run ranked before them that already waits for their slot', async () => {
    const slot = `c0:${randomUUID()}`;
    const [first, ...later] = await queuedRuns(3);
    await database.transactions.run((tx) => gateStarts(tx, [entryOf(first!, concurrency(slot, 0, 10))]));

    const outcomes = await database.transactions.run((tx) => gateStarts(tx, later.map((id, n) => entryOf(id, concurrency(slot, 5, 20 + n)))));

    expect(outcomes).toEqual<GateOutcome[]>(['waiting', 'waiting']);
    const waits = (await database.dataSource.query(`SELECT invocation_id FROM flow_waits WHERE slot = $1 ORDER BY rank`, [slot])) as Array<{ invocation_id: string }>;
    expect(waits.map((wait) => wait.invocation_id)).toEqual([first, ...later]);
  });

  it('holds a later-ranked run back only on the slot an earlier one waits for, not on its other slots', async () => {
    const shared = `c0:${randomUUID()}`;
    const full = `c1:${randomUUID()}`;
    const [blocked, behind, onFull] = await queuedRuns(3);
    // `blocked` needs the shared slot and a full one, so it waits for the full one; `behind`
    // needs only the shared slot, which is free; `onFull` only the full one.
    const both: FlowRules = { slots: [{ kind: 'concurrency', slot: shared, limit: 5, key: 'k' }, { kind: 'concurrency', slot: full, limit: 0, key: 'k' }], rank: 1 };
    const outcomes = await database.transactions.run((tx) => gateStarts(tx, [entryOf(behind!, concurrency(shared, 5, 2)), entryOf(blocked!, both), entryOf(onFull!, concurrency(full, 0, 3))]));

    expect(outcomes).toEqual<GateOutcome[]>(['started', 'waiting', 'waiting']);
    const waits = (await database.dataSource.query(`SELECT invocation_id, slot FROM flow_waits WHERE invocation_id = ANY($1::uuid[]) ORDER BY rank`, [[blocked, onFull]])) as Array<{ invocation_id: string; slot: string }>;
    expect(waits).toEqual([
      { invocation_id: blocked, slot: full },
      { invocation_id: onFull, slot: full },
    ]);
  });

  it('hands back a started run as its start wrote it, so its end needs no read', async () => {
    const slot = `c:${randomUUID()}`;
    const ids = await queuedRuns(2);

    const results = await database.transactions.run((tx) => gateStartsOf(tx, ids.map((id, n) => entryOf(id, concurrency(slot, 1, n)))));

    expect(results.map((result) => result.outcome)).toEqual<GateOutcome[]>(['started', 'waiting']);
    const [view] = (await database.dataSource.query(`SELECT document, sequence FROM invocation_views WHERE id = $1`, [ids[0]])) as Array<{ document: unknown; sequence: number }>;
    expect(results[0]!.started).toEqual({ id: ids[0], orgId: expect.any(String), projectId, sequence: 2, document: view!.document });
    expect(Number(view!.sequence)).toBe(2);
    expect(results[1]!.started).toBeNull();
  });

  it('moves a throttle on with each start: at most limit + burst start at once', async () => {
    const slot = `t:${randomUUID()}`;
    const ids = await queuedRuns(5);
    const rules = (rank: number): FlowRules => ({ slots: [{ kind: 'throttle', slot, limit: 2, periodMs: 60_000, burst: 1, key: 'k' }], rank });

    const outcomes = await database.transactions.run((tx) => gateStarts(tx, ids.map((id, n) => entryOf(id, rules(n)))));

    expect(outcomes).toEqual<GateOutcome[]>(['started', 'started', 'waiting', 'waiting', 'waiting']);
    const [throttle] = (await database.dataSource.query(`SELECT (extract(epoch FROM tat) * 1000)::float8 AS tat, (extract(epoch FROM now()) * 1000)::float8 AS now FROM flow_throttles WHERE slot = $1`, [slot])) as Array<{ tat: number; now: number }>;
    // Two starts, 30 s apart in the GCRA's terms: the time is a minute ahead.
    expect(throttle!.tat - throttle!.now).toBeGreaterThan(59_000);
    expect(throttle!.tat - throttle!.now).toBeLessThanOrEqual(60_000);
    // And the next transaction sees it: nothing more starts.
    const [next] = await queuedRuns(1);
    expect(await database.transactions.run((tx) => gateStarts(tx, [entryOf(next!, rules(0))]))).toEqual(['waiting']);
  });

  it('never holds a run back on a throttle far above the rate of its starts, decided together or one transaction each', async () => {
    const slot = `t:${randomUUID()}`;
    const rules = (rank: number): FlowRules => ({ slots: [{ kind: 'throttle', slot, limit: 100_000, periodMs: 1000, burst: 0, key: 'k' }], rank });
    const together = await queuedRuns(20);
    const apart = await queuedRuns(10);

    const outcomes = [
      ...(await database.transactions.run((tx) => gateStarts(tx, together.map((id, n) => entryOf(id, rules(n)))))),
      ...(await Promise.all(apart.map((id, n) => database.transactions.run((tx) => gateStarts(tx, [entryOf(id, rules(100 + n))]))))).flat(),
    ];

    expect(outcomes.filter((outcome) => outcome !== 'started')).toEqual([]);
  });

  it("writes what a run waited for into its read model's trace: waiting, then started", async () => {
    const slot = `c0:${randomUUID()}`;
    const [run] = await queuedRuns(1);
    const flowTrace = async () => ((await database.dataSource.query(`SELECT document->'trace'->'flowControl' AS f FROM invocation_views WHERE id = $1`, [run])) as Array<{ f: unknown }>)[0]!.f;
    await database.transactions.run((tx) => gateStarts(tx, [entryOf(run!, concurrency(slot, 0, 1))]));
    expect(await flowTrace()).toEqual({ waitingFor: 'concurrency', key: 'k', since: expect.any(String) });

    expect(await database.transactions.run((tx) => gateStarts(tx, [entryOf(run!, concurrency(slot, 1, 1))]))).toEqual(['started']);

    expect(await flowTrace()).toEqual({ waitedMs: expect.any(Number), reasons: ['concurrency'] });
  });

  it('says moved-on for a run no longer waiting, and forgets its wait', async () => {
    const slot = `c0:${randomUUID()}`;
    const [run] = await queuedRuns(1);
    expect(await database.transactions.run((tx) => gateStart(tx, entryOf(run!, concurrency(slot, 0, 1)).claim, concurrency(slot, 0, 1)))).toBe('waiting');
    await database.dataSource.query(`UPDATE invocations SET status = 'CANCELLED' WHERE id = $1`, [run]);

    expect(await database.transactions.run((tx) => gateStarts(tx, [entryOf(run!, concurrency(slot, 5, 1))]))).toEqual(['moved-on']);
    expect(await database.dataSource.query(`SELECT 1 FROM flow_waits WHERE invocation_id = $1`, [run])).toEqual([]);
  });

  it('never starts more than the limit when two transactions decide starts of one slot at once', async () => {
    const slot = `c0:${randomUUID()}`;
    const ids = await queuedRuns(40);
    const halves = [ids.slice(0, 20), ids.slice(20)];

    const outcomes = (await Promise.all(halves.map((half) => database.transactions.run((tx) => gateStarts(tx, half.map((id, n) => entryOf(id, concurrency(slot, 7, n)))))))).flat();

    expect(outcomes.filter((outcome) => outcome === 'started')).toHaveLength(7);
    const [running] = (await database.dataSource.query(`SELECT count(*)::int AS n FROM invocations WHERE id = ANY($1::uuid[]) AND status = 'RUNNING'`, [ids])) as Array<{ n: number }>;
    expect(running!.n).toBe(7);
  });

  it('offers the dispatcher the first-ranked waiting runs of each slot that may be tried, several per slot, none behind a throttle whose time has not come', async () => {
    await database.dataSource.query('DELETE FROM flow_waits');
    const full = `c0:${randomUUID()}`;
    const throttled = `t:${randomUUID()}`;
    const onFull = await queuedRuns(5);
    const onThrottle = await queuedRuns(2);
    await database.transactions.run((tx) => gateStarts(tx, onFull.map((id, n) => entryOf(id, concurrency(full, 0, 10 + n)))));
    const throttle = (rank: number): FlowRules => ({ slots: [{ kind: 'throttle', slot: throttled, limit: 1, periodMs: 3_600_000, burst: 0, key: 'k' }], rank });
    expect(await database.transactions.run((tx) => gateStarts(tx, onThrottle.map((id, n) => entryOf(id, throttle(n)))))).toEqual(['started', 'waiting']);

    const offered = await nextWaitingStarts(database.dataSource.manager, 64, 3);

    expect(offered.runs.map((run) => run.invocationId)).toEqual(onFull.slice(0, 3));
    expect(offered.runs[0]).toEqual({ invocationId: onFull[0], fromStatus: 'QUEUED', waitingJob: null });
    // The throttled run's time is an hour away: the dispatcher learns when to look for it.
    expect(offered.nextInMs).toBeGreaterThan(3_500_000);
    expect(offered.nextInMs).toBeLessThanOrEqual(3_600_000);
    expect(await earliestRetryInMs(database.dataSource.manager)).toBeCloseTo(offered.nextInMs!, -3);
  });
});
