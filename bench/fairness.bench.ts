// Fairness between projects (issue 32, DESIGN section 13): project A enqueues 20,000 async runs
// at once while project B sends 10 runs a second; what B's runs wait, accepted -> RUNNING
// (createdAt -> startedAt of the read model), with the invocation service's fair start order and,
// in the same run on a fresh system, with first in, first out (FAIR_START_ORDER=off, the order
// the work queue delivers commands in: the baseline). Goal: B's p99 <= 50 ms with the fair order.
// Each run calls a receiver in this process that answers after --work-ms, so every run is queued
// and holds a run slot meanwhile. Gateway + invocation service in one child process on NATS
// JetStream and a fresh PostgreSQL database, from the compiled build.
//
//   npm run build && npm run bench:fairness -- [--a-runs 20000] [--b-rate 10] [--work-ms 20] ...
//
// bench/README.md explains what is measured and how.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { openBenchDatabase } from './support/bench-database.js';
import { logTail, machineBusySeconds } from './support/child-server.js';
import { COMMON_OPTION_SPECS, formatUsage, parseArgsOrExplain, positiveInteger, UsageError } from './support/cli.js';
import { distributionOf, type Distribution } from './support/distribution.js';
import { setUpFairnessProjects, TriggerSender, type FairnessProject } from './support/fairness-setup.js';
import { printFigure } from './support/figures.js';
import { ms, printTable } from './support/report.js';
import { hasBuild, startSystem } from './support/servers.js';
import { runBench, type BenchSession } from './support/session.js';

const GOAL_P99_MS = 50;
const ORDERS = ['fifo', 'fair'] as const;
type Order = (typeof ORDERS)[number];

const USAGE = `Usage: npm run bench:fairness -- [options]

Project A enqueues --a-runs async runs at once; project B sends --b-rate runs a second until A's
last run has ended. Reports B's queue wait (accepted -> RUNNING) with first in, first out and
with the fair start order, each on a fresh system, in one run.

${formatUsage([
  ['--a-runs <n>', "project A's runs, sent at once (default 20000)"],
  ['--b-rate <n>', "project B's runs per second (default 10)"],
  ['--work-ms <ms>', 'how long the receiver each run calls takes to answer (default 20)'],
  ['--connections <n>', "connections A's runs are sent over at once (default 32)"],
  ['--order <o>', 'both, fifo or fair (default both: fifo first)'],
  ['--trace', 'print every second where the runs wait: unsent outbox rows, the start queue, QUEUED and RUNNING runs'],
  ['--dist <dir>', 'the build to run (default dist/ of this repository)'],
])}`;

interface PhaseResult {
  order: Order;
  /** B's queue wait, ms. */
  bWait: Distribution;
  /** B's 202 latency, ms. */
  bAccept: Distribution;
  /** B's 202 answered -> RUNNING, ms (negative: the run started before its 202 arrived): the wait without the acceptance itself. */
  bAfterAccept: Distribution;
  /** B's queue wait of the runs sent after A's last was accepted (A's backlog waiting, the gateway no longer taking A's burst), ms. */
  bWaitWhileAWaits: Distribution;
  aAcceptedSeconds: number;
  aDrainedSeconds: number;
  /** CPU the whole machine was busy, in cores, over the phase (the system, this process, PostgreSQL, NATS and anything else). */
  machineCores: number | undefined;
  loadAverage: number;
}

/** Answers POST /work/<project> after `workMs`; counts the calls. */
async function startReceiver(workMs: number): Promise<{ server: Server; url: string; calls: Map<string, number> }> {
  const calls = new Map<string, number>();
  const server = createServer((incoming, response) => {
    incoming.resume();
    const project = (incoming.url ?? '').split('/').pop() ?? '';
    calls.set(project, (calls.get(project) ?? 0) + 1);
    setTimeout(() => response.writeHead(200, { 'content-type': 'application/json' }).end('{}'), workMs);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, calls };
}

async function runPhase(session: BenchSession, options: { order: Order; aRuns: number; bRate: number; connections: number; dist: string; receiverUrl: string; trace: boolean }): Promise<PhaseResult> {
  const database = await openBenchDatabase(process.env);
  session.onCleanup('drop the database', () => database.drop());
  const system = await startSystem(session, {
    bus: 'nats',
    profile: false,
    dist: options.dist,
    databaseUrl: database.url,
    env: { FAIR_START_ORDER: options.order === 'fair' ? 'on' : 'off', OUTBOUND_ALLOWED_CIDRS: '127.0.0.0/8' },
  });
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  const sender = new TriggerSender(system.server.url, options.connections + 4);
  try {
    const [a, b] = await setUpFairnessProjects(system.server.url, system.consoleJwtSecret, options.receiverUrl, ['a', 'b']);
    // One run each first: the definitions have reached the invocation service, the paths are warm.
    for (const project of [a!, b!]) await sender.trigger(project, -1);
    await waitUntilNoneOpen(client, [a!, b!], 30_000);

    const busyBefore = machineBusySeconds();
    const startedAt = performance.now();
    const bRuns: Array<Promise<{ invocationId: string; acceptMs: number; answeredAt: number }>> = [];
    let aDone = false;
    const tracing = options.trace ? traceWaits(database.url, () => aDone) : Promise.resolve();
    const bSending = (async () => {
      for (let n = 0; !aDone; n++) {
        bRuns.push(sender.trigger(b!, n));
        const next = startedAt + ((n + 1) * 1000) / options.bRate;
        await sleep(Math.max(0, next - performance.now()));
      }
    })();
    await sender.burst(a!, options.aRuns, options.connections);
    const aAcceptedSeconds = (performance.now() - startedAt) / 1000;
    const aAcceptedEpochMs = Date.now();
    await waitUntilNoneOpen(client, [a!], 30 * 60_000);
    const aDrainedSeconds = (performance.now() - startedAt) / 1000;
    aDone = true;
    await bSending;
    await tracing;
    const accepted = await Promise.all(bRuns);
    await waitUntilNoneOpen(client, [b!], 60_000);
    const busyAfter = machineBusySeconds();
    const elapsed = (performance.now() - startedAt) / 1000;

    const { rows } = await client.query<{ id: string; wait_ms: number; started_ms: number }>(
      `SELECT id, extract(epoch FROM ((document->>'startedAt')::timestamptz - (document->>'createdAt')::timestamptz)) * 1000 AS wait_ms,
              extract(epoch FROM (document->>'startedAt')::timestamptz) * 1000 AS started_ms
         FROM invocation.invocation_views WHERE id = ANY($1::uuid[])`,
      [accepted.map((run) => run.invocationId)],
    );
    const answeredAt = new Map(accepted.map((run) => [run.invocationId, run.answeredAt]));
    // Sent once A's last run was accepted: A's backlog waits, and the gateway takes B's requests alone.
    const sentWhileAWaits = new Set(accepted.filter((run) => run.answeredAt - run.acceptMs >= aAcceptedEpochMs).map((run) => run.invocationId));
    if (rows.length !== accepted.length) throw new Error(`${accepted.length} runs of B accepted, ${rows.length} found`);
    const failed = await client.query<{ n: number }>(`SELECT count(*)::int AS n FROM invocation.invocation_views WHERE status <> 'SUCCEEDED'`);
    if (failed.rows[0]!.n > 0) throw new Error(`${failed.rows[0]!.n} runs did not succeed:\n${logTail(system.server.logFile)}`);
    return {
      order: options.order,
      bWait: distributionOf(rows.map((row) => Number(row.wait_ms))),
      bAccept: distributionOf(accepted.map((run) => run.acceptMs)),
      bAfterAccept: distributionOf(rows.map((row) => Number(row.started_ms) - answeredAt.get(row.id)!)),
      bWaitWhileAWaits: distributionOf(rows.filter((row) => sentWhileAWaits.has(row.id)).map((row) => Number(row.wait_ms))),
      aAcceptedSeconds,
      aDrainedSeconds,
      machineCores: busyBefore === undefined || busyAfter === undefined ? undefined : (busyAfter - busyBefore) / elapsed,
      loadAverage: os.loadavg()[0]!,
    };
  } finally {
    sender.close();
    await client.end();
    await system.server.stop();
    await database.drop();
  }
}

/** Prints every second where runs wait, until `done`. */
async function traceWaits(databaseUrl: string, done: () => boolean): Promise<void> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    while (!done()) {
      const { rows } = await client.query<Record<string, number>>(
        `SELECT (SELECT count(*)::int FROM invocation.outbox WHERE published_at IS NULL) AS unsent,
                (SELECT count(*)::int FROM invocation.start_queue) AS start_queue,
                (SELECT count(*)::int FROM invocation.invocations WHERE status = 'QUEUED') AS queued,
                (SELECT count(*)::int FROM invocation.invocations WHERE status = 'RUNNING') AS running`,
      );
      console.log(`  trace ${new Date().toISOString().slice(11, 23)} ${JSON.stringify(rows[0])}`);
      await sleep(1000);
    }
  } finally {
    await client.end();
  }
}

/** Waits until no run of `projects` is QUEUED or RUNNING. */
async function waitUntilNoneOpen(client: pg.Client, projects: FairnessProject[], timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { rows } = await client.query<{ open: number }>(
      `SELECT count(*)::int AS open FROM invocation.invocation_views WHERE project_id = ANY($1::uuid[]) AND status IN ('QUEUED', 'RUNNING')`,
      [projects.map((project) => project.projectId)],
    );
    if (rows[0]!.open === 0) return;
    if (Date.now() > deadline) throw new Error(`${rows[0]!.open} runs still open after ${timeoutMs} ms`);
    await sleep(250);
  }
}

await runBench(USAGE, async (session) => {
  const { values } = parseArgsOrExplain({
    options: {
      'a-runs': { type: 'string', default: '20000' },
      'b-rate': { type: 'string', default: '10' },
      'work-ms': { type: 'string', default: '20' },
      connections: { type: 'string', default: '32' },
      order: { type: 'string', default: 'both' },
      trace: { type: 'boolean', default: false },
      dist: COMMON_OPTION_SPECS.dist,
      help: COMMON_OPTION_SPECS.help,
    },
  });
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  const aRuns = positiveInteger('--a-runs', values['a-runs']);
  const bRate = positiveInteger('--b-rate', values['b-rate']);
  const workMs = positiveInteger('--work-ms', values['work-ms']);
  const connections = positiveInteger('--connections', values.connections);
  const orders: Order[] = values.order === 'both' ? [...ORDERS] : ORDERS.includes(values.order as Order) ? [values.order as Order] : [];
  if (orders.length === 0) throw new UsageError(`--order must be both, fifo or fair (got ${values.order})`);
  const dist = path.resolve(values.dist);
  if (!hasBuild(dist)) throw new UsageError(`${dist} holds no build: run npm run build first`);

  const receiver = await startReceiver(workMs);
  session.onCleanup('stop the receiver', () => {
    receiver.server.closeAllConnections();
    return new Promise((resolve) => receiver.server.close(resolve));
  });
  console.log(`A: ${aRuns.toLocaleString()} runs at once over ${connections} connections; B: ${bRate} runs/s until A's last run ended; each run waits ${workMs} ms on the receiver`);
  console.log(`machine: ${os.cpus().length} cores, load average before ${os.loadavg().map((load) => load.toFixed(2)).join(' ')}`);

  const results: PhaseResult[] = [];
  for (const order of orders) {
    console.log(`\n${order === 'fair' ? 'fair start order' : 'first in, first out (FAIR_START_ORDER=off)'}: running…`);
    const result = await runPhase(session, { order, aRuns, bRate, connections, dist, receiverUrl: receiver.url, trace: values.trace });
    results.push(result);
    console.log(
      `  B: ${result.bWait.count} runs, queue wait p50 ${ms(result.bWait.p50)} ms, p99 ${ms(result.bWait.p99)} ms, max ${ms(result.bWait.max)} ms; ` +
        `A accepted in ${result.aAcceptedSeconds.toFixed(1)} s, all ended after ${result.aDrainedSeconds.toFixed(1)} s`,
    );
  }

  console.log('');
  printTable([
    ['order', 'B runs', 'B wait p50 ms', 'B wait p99 ms', 'B wait max ms', 'B 202 p99 ms', '202->RUNNING p50/p99 ms', 'once A accepted: B runs, wait p50/p99 ms', 'A accepted', 'A ended', 'machine busy', 'load avg'],
    ...results.map((result) => [
      result.order,
      String(result.bWait.count),
      ms(result.bWait.p50),
      ms(result.bWait.p99),
      ms(result.bWait.max),
      ms(result.bAccept.p99),
      `${ms(result.bAfterAccept.p50)} / ${ms(result.bAfterAccept.p99)}`,
      `${result.bWaitWhileAWaits.count}: ${ms(result.bWaitWhileAWaits.p50)} / ${ms(result.bWaitWhileAWaits.p99)}`,
      `${result.aAcceptedSeconds.toFixed(1)} s`,
      `${result.aDrainedSeconds.toFixed(1)} s`,
      result.machineCores === undefined ? 'n/a' : `${result.machineCores.toFixed(2)} cores`,
      result.loadAverage.toFixed(2),
    ]),
  ]);
  const fair = results.find((result) => result.order === 'fair');
  const fifo = results.find((result) => result.order === 'fifo');
  if (fair && fifo) {
    console.log(`B's queue wait p99, fair / first in first out: ${(fair.bWait.p99 / fifo.bWait.p99).toFixed(4)}`);
    console.log(`A's drain time, fair / first in first out: ${(fair.aDrainedSeconds / fifo.aDrainedSeconds).toFixed(3)}`);
  }
  if (fair) {
    console.log(`goal: B's p99 <= ${GOAL_P99_MS} ms with the fair order: ${fair.bWait.p99 <= GOAL_P99_MS ? 'met' : 'not met'} (${ms(fair.bWait.p99)} ms)`);
    printFigure({
      benchmark: 'fairness',
      figure: "B's queue wait p99 (ms), fair order; baseline first in, first out",
      value: fair.bWait.p99,
      ...(fifo ? { baseline: fifo.bWait.p99 } : {}),
      goal: `<= ${GOAL_P99_MS}`,
      met: fair.bWait.p99 <= GOAL_P99_MS,
    });
  }
  await session.finish({ clean: true, keepWork: false });
  return 0;
});
