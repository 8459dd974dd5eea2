// Runs benchmark: gateway and invocation service in one process, against a bare
// express 5 hello route measured in the same run.
//   (a) async accept: POST /v1/orgs/{orgId}/flows/{projectId}/trigger-async, answered 202 once
//       the run is recorded in PostgreSQL. Goal: at least 50% of express's req/s, p99 <= 25 ms.
//   (b) sync run: POST .../flows/{projectId}/trigger, a real run of the published flow,
//       answered 200, at low concurrency (latency, not queueing). Goal: p50 <= express p50 + 3 ms.
//
//   npm run build && npm run bench:runs -- [--bus nats|in-process] [--duration 10] ...
//
// bench/README.md explains what is measured and how.
import os from 'node:os';
import { AsyncRuns, type AsyncRunCounts } from './support/async-runs.js';
import { openBenchDatabase } from './support/bench-database.js';
import { logTail, type ChildServer } from './support/child-server.js';
import {
  busKind,
  COMMON_OPTION_SPECS,
  COMMON_USAGE,
  commonOptions,
  formatUsage,
  parseArgsOrExplain,
  positiveInteger,
  UsageError,
  type BusKind,
  type CommonOptions,
} from './support/cli.js';
import { authorizedJson, checkAnswers, setUpFlowTrigger, type FlowTrigger, type Probe } from './support/console-setup.js';
import { profileFiles, summarizeProfile } from './support/cpu-profile.js';
import { printFigure } from './support/figures.js';
import type { LoadTarget } from './support/load.js';
import { PostgresBackendsCpu, type CpuMeter } from './support/postgres-cpu.js';
import { indent, ms, percent, printComparison, throughputRatios } from './support/report.js';
import { measured, monotonicMicros, runRounds, type ClockWindow, type Measured, type Measurement } from './support/rounds.js';
import { hasBuild, startExpressHello, startSystem } from './support/servers.js';
import { runBench, type BenchSession } from './support/session.js';

const ACCEPT_RATIO_GOAL = 0.5;
const ACCEPT_P99_GOAL_MS = 25;
const SYNC_P50_BUDGET_MS = 3;
/**
 * EVERY_MATCH: every call runs the flow. Under the project default (ONE_TIME) every call after
 * the first for customer c-1 would end at the enrollment check, "skipped", without running.
 */
const TRIGGER_BODY = JSON.stringify({ event: 'order.created', customerId: 'c-1', orderId: '42', enrollmentPolicy: 'EVERY_MATCH' });
/** What the published flow (support/console-setup.ts) sends for TRIGGER_BODY. */
const EXPECTED_MESSAGE = 'Order 42';

const USAGE = `Usage: npm run bench:runs -- [options]
   or: node --import ./bench/register.mjs bench/runs.bench.ts [options]

${formatUsage([
  ['--bus <kind>', 'nats (default; NATS_URL, default nats://127.0.0.1:4222, unique BUS_PREFIX)\nor in-process (the launcher\'s embedded mode)'],
  ['--connections <n>', 'concurrent connections of the async accept phase (default 10)'],
  ['--latency-connections <n>', 'concurrent connections of the sync latency phase (default 1)'],
  ...COMMON_USAGE,
  ['--drain-timeout <s>', 'how long to wait for accepted runs to finish after each async load (default 300)'],
  ['--only <phase>', 'accept or sync: run one phase only (for profiling one of them)'],
])}

Database: DATABASE_URL if set, else a fresh database on BENCH_POSTGRES_ADMIN_URL
(default postgres://postgres@127.0.0.1:5432/postgres), dropped afterwards.`;

interface Options extends CommonOptions {
  bus: BusKind;
  only: 'accept' | 'sync' | undefined;
  latencyConnections: number;
  drainTimeoutMs: number;
}

async function main(session: BenchSession): Promise<number> {
  const options = parseOptions(process.argv.slice(2));
  if (!hasBuild(options.dist)) {
    console.error(`No build in ${options.dist}: run \`npm run build\` first.`);
    return 2;
  }
  const { connections, pipelining, duration } = options.settings;
  const estimate = (options.only ? 1 : 2) * (2 * options.warmup + 2 * options.rounds * duration);
  console.log(
    `Runs benchmark: async accept at ${connections} connections, sync latency at ${options.latencyConnections}; pipelining ${pipelining}; ` +
      `${options.rounds} rounds x ${duration} s per target after ${options.warmup} s warm-up (~${estimate} s of load, plus draining)`,
  );
  console.log(`Node ${process.version}, ${os.cpus().length} CPUs (${os.cpus()[0]?.model.trim() ?? 'unknown'}); logs in ${session.workDir}`);

  const database = await openBenchDatabase(process.env);
  session.onCleanup('drop the database', () => database.drop());
  console.log(`Database: ${database.description}; bus: ${options.bus}`);

  const express = await startExpressHello(session);
  const system = await startSystem(session, { bus: options.bus, profile: options.profile, dist: options.dist, databaseUrl: database.url });
  console.log(`Started express (pid ${express.pid}) at ${express.url} and gateway + invocation (pid ${system.server.pid}) at ${system.server.url}`);

  const trigger = await setUpFlowTrigger(system.server.url, system.consoleJwtSecret);
  const asyncUrl = `${system.server.url}${trigger.path}-async`;
  const syncUrl = system.server.url + trigger.path;
  console.log('Route checks:');
  console.log(indent(await checkAnswers(routeProbes(trigger, asyncUrl, syncUrl))));

  const runs = await AsyncRuns.open(database.url);
  session.onCleanup('close the run watcher', () => runs.close());
  const databaseCpu = await PostgresBackendsCpu.open(database.url, [runs.backendPid]);
  session.onCleanup('close the database CPU meter', () => databaseCpu.close());
  const backlog = new Backlog(runs, system.server, databaseCpu, options.drainTimeoutMs, (await runs.waitUntilDone(options.drainTimeoutMs)).after);

  const context: PhaseContext = { options, express, system: system.server, trigger, asyncUrl, syncUrl, databaseCpu };
  const accept = options.only === 'sync' ? undefined : await acceptPhase(context, backlog);
  const latency = options.only === 'accept' ? undefined : await latencyPhase(context);

  const results: Result[] = [];
  if (accept) results.push(...reportAccept(accept, options, backlog));
  if (latency) results.push(...reportLatency(latency, options));
  const final = await runs.counts();
  const runsOk = final.failed === 0 && final.other === 0 && final.open === 0;
  console.log('\nResults');
  for (const result of results) console.log(`  ${result.line}: ${result.met ? 'PASS' : 'MISS'}`);
  if (accept) console.log(`  info: ${backlog.rateLine()}`);
  console.log(`  async runs at the end: ${describeCounts(final)}`);

  const clean = results.every((result) => result.clean) && runsOk;
  if (!clean) {
    const why = !runsOk
      ? final.open > 0
        ? 'accepted runs were still open when a drain timed out (--drain-timeout), so later rounds shared the CPU with them.'
        : 'not every accepted run succeeded, so the runs measured are not the flow the benchmark asked for.'
      : 'some answers had another status or failed (see "other" above).';
    console.log(`\nINVALID: ${why}`);
    console.log(`system log (end):\n${indent(logTail(system.server.logFile))}`);
  }

  await session.finish({ clean, keepWork: options.profile });
  if (options.profile) {
    for (const file of profileFiles(system.profileDir)) {
      console.log(`\nCPU profile of the system (open in Chrome DevTools or speedscope): ${file}`);
      if (accept) {
        console.log(`(a) async accept rounds (accepting, with runs executing in the background):\n${indent(summarizeProfile(file, accept[1].windows))}`);
        console.log(`(a) draining after the rounds (executing only):\n${indent(summarizeProfile(file, backlog.drainWindows))}`);
      }
      if (latency) console.log(`(b) sync run rounds:\n${indent(summarizeProfile(file, latency[1].windows))}`);
    }
  }
  return clean ? 0 : 1;
}

interface PhaseContext {
  options: Options;
  express: ChildServer;
  system: ChildServer;
  trigger: FlowTrigger;
  asyncUrl: string;
  syncUrl: string;
  databaseCpu: CpuMeter;
}

/** A goal's verdict line; `clean` when the answers behind it were all the expected ones. */
interface Result {
  line: string;
  met: boolean;
  clean: boolean;
}

/** (a): express hello against trigger-async; accepted runs are drained after each load run. */
async function acceptPhase(context: PhaseContext, backlog: Backlog): Promise<[Measured, Measured]> {
  const { options, express, system, trigger, asyncUrl, databaseCpu } = context;
  console.log(
    `\n(a) async accept, ${options.settings.connections} connections; accepted runs execute in the background, and are waited for after each load run`,
  );
  const entries: [Measured, Measured] = [
    measured(expressTarget(express), express),
    measured(
      { label: 'async accept (POST trigger-async)', url: asyncUrl, method: 'POST', headers: authorizedJson(trigger), body: TRIGGER_BODY, expectedStatus: 202 },
      system,
      { database: databaseCpu, afterLoad: (measurement, phase) => backlog.drain(measurement, phase) },
    ),
  ];
  await runRounds(entries, options.settings, options.rounds, options.warmup);
  return entries;
}

/** (b): express hello against the sync trigger, at low concurrency so latency is not queueing. */
async function latencyPhase(context: PhaseContext): Promise<[Measured, Measured]> {
  const { options, express, system, trigger, syncUrl, databaseCpu } = context;
  console.log(`\n(b) sync run latency, ${options.latencyConnections} connection(s)`);
  const entries: [Measured, Measured] = [
    measured(expressTarget(express), express),
    measured(
      { label: 'sync run (POST trigger)', url: syncUrl, method: 'POST', headers: authorizedJson(trigger), body: TRIGGER_BODY, expectedStatus: 200 },
      system,
      { database: databaseCpu },
    ),
  ];
  await runRounds(entries, { ...options.settings, connections: options.latencyConnections }, options.rounds, options.warmup);
  return entries;
}

function reportAccept(entries: [Measured, Measured], options: Options, backlog: Backlog): Result[] {
  console.log(`\n(a) async accept, ${options.settings.connections} connections, ${options.rounds} rounds:`);
  const { baseline, subject, clean } = printComparison(entries);
  const { ratio, perRound, cpuRatio } = throughputRatios(entries);
  console.log(`ratio per round: ${perRound.map(percent).join(', ')}; CPU per request, express / system: ${percent(cpuRatio)}`);
  console.log(backlog.report());
  const p99 = subject.latencyMs.p99;
  printFigure({ benchmark: 'runs', figure: 'async accept, req/s (baseline: express hello)', value: Math.round(subject.requestsPerSecond), baseline: Math.round(baseline.requestsPerSecond), goal: `>= ${percent(ACCEPT_RATIO_GOAL)} of baseline`, met: ratio >= ACCEPT_RATIO_GOAL });
  printFigure({ benchmark: 'runs', figure: 'async accept p99, ms', value: Number(ms(p99)), goal: `<= ${ACCEPT_P99_GOAL_MS}`, met: p99 <= ACCEPT_P99_GOAL_MS });
  return [
    { line: `(a) async accept ${percent(ratio)} of express hello's req/s (goal >= ${percent(ACCEPT_RATIO_GOAL)})`, met: ratio >= ACCEPT_RATIO_GOAL, clean },
    { line: `    async accept p99 ${ms(p99)} ms (goal <= ${ACCEPT_P99_GOAL_MS} ms)`, met: p99 <= ACCEPT_P99_GOAL_MS, clean },
  ];
}

function reportLatency(entries: [Measured, Measured], options: Options): Result[] {
  console.log(`\n(b) sync run latency, ${options.latencyConnections} connection(s), ${options.rounds} rounds:`);
  const { baseline, subject, clean } = printComparison(entries);
  const added = subject.latencyMs.p50 - baseline.latencyMs.p50;
  printFigure({ benchmark: 'runs', figure: 'sync run p50, ms (baseline: express hello)', value: Number(ms(subject.latencyMs.p50)), baseline: Number(ms(baseline.latencyMs.p50)), goal: `<= baseline + ${SYNC_P50_BUDGET_MS}`, met: added <= SYNC_P50_BUDGET_MS });
  return [
    {
      line:
        `(b) sync run p50 ${ms(subject.latencyMs.p50)} ms = express hello p50 ${ms(baseline.latencyMs.p50)} ms ` +
        `${added >= 0 ? '+' : '-'} ${ms(Math.abs(added))} ms (goal <= + ${SYNC_P50_BUDGET_MS} ms)`,
      met: added <= SYNC_P50_BUDGET_MS,
      clean,
    },
  ];
}

function routeProbes(trigger: FlowTrigger, asyncUrl: string, syncUrl: string): Probe[] {
  const headers = authorizedJson(trigger);
  return [
    { what: 'async, no token', url: asyncUrl, headers: { 'content-type': 'application/json' }, body: TRIGGER_BODY, expectedStatus: 401 },
    { what: 'sync, no token', url: syncUrl, headers: { 'content-type': 'application/json' }, body: TRIGGER_BODY, expectedStatus: 401 },
    {
      what: 'async',
      url: asyncUrl,
      headers,
      body: TRIGGER_BODY,
      expectedStatus: 202,
      checkBody: (body) => (isRecord(body) && body.status === 'QUEUED' && typeof body.invocationId === 'string' ? undefined : 'expected a QUEUED run'),
    },
    {
      what: 'sync',
      url: syncUrl,
      headers,
      body: TRIGGER_BODY,
      expectedStatus: 200,
      checkBody: (body) =>
        isRecord(body) && body.status === 'SUCCEEDED' && JSON.stringify(body.result ?? null).includes(EXPECTED_MESSAGE) && !isSkipped(body.result)
          ? undefined
          : `expected a SUCCEEDED run whose result holds "${EXPECTED_MESSAGE}"`,
    },
  ];
}

function expressTarget(express: ChildServer): LoadTarget {
  return { label: 'express hello (GET /)', url: `${express.url}/`, method: 'GET', expectedStatus: 200 };
}

/**
 * The runs the async accept phase leaves behind. After each load run it waits until they have
 * all finished, so the next measurement (express's, often) does not share the CPU with them,
 * and it counts what was executed, in how long, for how much CPU.
 */
class Backlog {
  readonly drainWindows: ClockWindow[] = [];
  /** Over the measured rounds: their load runs and the drains after them. */
  private readonly total = { executed: 0, loadSeconds: 0, cpuSeconds: 0, dbCpuSeconds: 0 };
  /** The drains alone: execution without accepting. */
  private readonly draining = { executed: 0, seconds: 0, cpuSeconds: 0, dbCpuSeconds: 0 };
  private unfinished = 0;

  constructor(
    private readonly runs: AsyncRuns,
    private readonly server: ChildServer,
    private readonly database: CpuMeter,
    private readonly timeoutMs: number,
    private last: AsyncRunCounts,
  ) {}

  async drain(measurement: Measurement, phase: 'warm-up' | 'round'): Promise<string> {
    const stopDatabaseMeter = await this.database.start();
    const cpuBefore = this.server.cpuSeconds();
    const startUs = monotonicMicros();
    const drained = await this.runs.waitUntilDone(this.timeoutMs);
    const window = { startUs, endUs: monotonicMicros() };
    const cpuAfter = this.server.cpuSeconds();
    const dbCpuSeconds = (await stopDatabaseMeter()) ?? Number.NaN;
    const cpuSeconds = cpuBefore === undefined || cpuAfter === undefined ? Number.NaN : cpuAfter - cpuBefore;
    const executed = drained.after.finished - this.last.finished;
    this.last = drained.after;
    if (phase === 'round') {
      this.total.executed += executed;
      this.total.loadSeconds += measurement.run.raw.duration;
      this.total.cpuSeconds += (measurement.cpuSeconds ?? Number.NaN) + cpuSeconds;
      this.total.dbCpuSeconds += (measurement.dbCpuSeconds ?? Number.NaN) + dbCpuSeconds;
      this.draining.executed += drained.after.finished - drained.before.finished;
      this.draining.seconds += drained.seconds;
      this.draining.cpuSeconds += cpuSeconds;
      this.draining.dbCpuSeconds += dbCpuSeconds;
      this.drainWindows.push(window);
      if (!drained.done) this.unfinished += drained.after.open;
    }
    const rate = executed / (measurement.run.raw.duration + drained.seconds);
    return (
      `backlog: ${drained.before.open} runs open when the load stopped; ` +
      (drained.done ? `all finished ${drained.seconds.toFixed(1)} s later` : `${drained.after.open} STILL OPEN after ${drained.seconds.toFixed(0)} s`) +
      `; ${executed} executed, ${rate.toFixed(0)}/s over load + drain`
    );
  }

  report(): string {
    const { total, draining } = this;
    return [
      `async runs of the measured rounds: ${total.executed} executed` +
        (this.unfinished > 0 ? `; ${this.unfinished} were still open when a drain timed out` : ''),
      `CPU per run, accept + execution (load and drain): system ${perRun(total.cpuSeconds, total.executed)} us, ` +
        `DB ${perRun(total.dbCpuSeconds, total.executed)} us`,
      `CPU per run while draining (execution only): system ${perRun(draining.cpuSeconds, draining.executed)} us, ` +
        `DB ${perRun(draining.dbCpuSeconds, draining.executed)} us`,
    ].join('\n');
  }

  rateLine(): string {
    const { total, draining } = this;
    const seconds = total.loadSeconds + draining.seconds;
    return (
      `async runs executed per second: ${(total.executed / seconds).toFixed(0)} over load + drain ` +
      `(${total.loadSeconds.toFixed(0)} s + ${draining.seconds.toFixed(1)} s), ${(draining.executed / draining.seconds).toFixed(0)} while draining alone`
    );
  }
}

function perRun(cpuSeconds: number, runs: number): string {
  const micros = (cpuSeconds * 1e6) / runs;
  return Number.isFinite(micros) ? micros.toFixed(0) : '-';
}

function describeCounts(counts: AsyncRunCounts): string {
  return `${counts.succeeded} succeeded, ${counts.failed} failed, ${counts.open} queued or running, ${counts.other} other`;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}

function isSkipped(result: unknown): boolean {
  return isRecord(result) && result.skipped === true;
}

function parseOptions(argv: string[]): Options {
  const { values } = parseArgsOrExplain({
    args: argv,
    options: {
      ...COMMON_OPTION_SPECS,
      bus: { type: 'string', default: 'nats' },
      'latency-connections': { type: 'string', default: '1' },
      'drain-timeout': { type: 'string', default: '300' },
      only: { type: 'string' },
    },
  });
  if (values.help) {
    console.log(USAGE);
    process.exit(0);
  }
  if (values.only !== undefined && values.only !== 'accept' && values.only !== 'sync') throw new UsageError('--only must be accept or sync');
  return {
    ...commonOptions(values),
    bus: busKind(values.bus),
    only: values.only,
    latencyConnections: positiveInteger('--latency-connections', values['latency-connections']),
    drainTimeoutMs: positiveInteger('--drain-timeout', values['drain-timeout']) * 1000,
  };
}

await runBench(USAGE, main);
