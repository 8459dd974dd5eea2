import { EventEmitter } from 'node:events';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from '@runline/observability';
import type { FlowRules } from '../src/lifecycle/flow-decision.js';
import { historyAppend } from '../src/lifecycle/run-history.js';
import { claimedStart } from '../src/lifecycle/run-lifecycle.js';
import { FlowDispatcher } from '../src/runs/flow-dispatcher.js';
import { gateStarts } from '../src/runs/flow-gate.repository.js';
import { insertInvocations } from '../src/runs/new-runs.repository.js';
import type { FlowControl } from '../src/runs/run-flow-control.js';
import type { RunStarter } from '../src/runs/run-starter.js';
import { useInvocationDatabase } from './support/invocation-database.js';
import { newQueuedRun } from './support/queued-runs.js';

/** The dispatcher of runs flow control holds back, on a real PostgreSQL, with a starter that only records when it was asked. */
describe("flow control's dispatcher", () => {
  const database = useInvocationDatabase();
  const projectId = randomUUID();


  it("tries a run a throttle holds back when its time comes, not at the next look after it", async () => {
    const runs = [newQueuedRun(projectId), newQueuedRun(projectId)];
    await database.transactions.run((tx) => insertInvocations(tx, runs));
    // 4 a second with burst 0: the first starts, the second may start 250 ms later.
    const rules: FlowRules = { slots: [{ kind: 'throttle', slot: `t:${randomUUID()}`, limit: 4, periodMs: 1000, burst: 0, key: 'k' }], rank: 1 };
    const outcomes = await database.transactions.run((tx) =>
      gateStarts(
        tx,
        runs.map((run) => {
          const claim = claimedStart({ id: run.id, orgId: run.orgId, projectId, attempt: 0 }, { status: 'QUEUED' }, { owner: 'test', expiresAt: new Date(Date.now() + 60_000) });
          return { claim: { invocationId: run.id, projectId, known: null, expected: claim.expected, change: claim.change, history: (at: Date) => historyAppend(claim, at) }, rules };
        }),
      ),
    );
    expect(outcomes.map((result) => result.outcome)).toEqual(['started', 'waiting']);
    const [wait] = (await database.dataSource.query(`SELECT (extract(epoch FROM retry_at) * 1000)::float8 AS at FROM flow_waits WHERE invocation_id = $1`, [runs[1]!.id])) as Array<{ at: number }>;
    const dueAt = wait!.at;

    // Started so that its looks every 100 ms fall 5 ms before the run's time and 95 ms after it.
    await sleep(Math.max(0, dueAt - 305 - Date.now()));
    const tried: number[] = [];
    const starter = {
      start: () => {
        tried.push(Date.now());
        return Promise.resolve('claimed');
      },
    } as unknown as RunStarter;
    const flow = { events: new EventEmitter() } as unknown as FlowControl;
    const dispatcher = new FlowDispatcher(database.transactions, starter, flow, { warn: () => undefined } as unknown as Logger);
    dispatcher.onApplicationBootstrap();
    try {
      await sleep(dueAt + 150 - Date.now());
    } finally {
      await dispatcher.onApplicationShutdown();
    }

    expect(tried.length).toBeGreaterThan(0);
    expect(tried[0]! - dueAt).toBeGreaterThanOrEqual(-1);
    expect(tried[0]! - dueAt).toBeLessThan(50);
  });
});
