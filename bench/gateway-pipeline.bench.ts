// Gateway pipeline benchmark: the external flow trigger route (version, token, project, master
// switch, scope, type and body checks; no run) against a bare express 5 hello route measured in
// the same run. Prints both throughputs and their ratio; the goal is at least 70%.
//
//   npm run build && npm run bench:gateway -- [--duration 10] [--connections 10] ...
//
// Both servers run in child processes and the load comes from this process, so the two cores
// are shared the same way for both. bench/README.md explains what is measured and how.
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import type { RawResult } from 'autocannon';
import { openBenchDatabase } from './support/bench-database.js';
import { freePort, logTail, startChildServer, type ChildServer } from './support/child-server.js';
import { checkPipeline, setUpFlowTrigger } from './support/console-setup.js';
import { isClean, runLoad, summarize, type LoadSettings, type LoadSummary, type LoadTarget } from './support/load.js';
import { deleteStreamsWithPrefix } from './support/nats-streams.js';

const GOAL = 0.7;
const TRIGGER_BODY = JSON.stringify({ event: 'order.created', customerId: 'c-1', orderId: '42' });
/** What the route answers after the whole pipeline while the run engine does not exist. */
const DEFAULT_EXPECTED_STATUS = 501;

const benchDir = path.dirname(fileURLToPath(import.meta.url));
const repoRoot = path.resolve(benchDir, '..');
const registerHooks = path.join(benchDir, 'register.mjs');

const USAGE = `Usage: npm run bench:gateway -- [options]
   or: node --import ./bench/register.mjs bench/gateway-pipeline.bench.ts [options]

  --duration <s>       seconds per measured round and target (default 10)
  --connections <n>    concurrent connections (default 10)
  --pipelining <n>     requests in flight per connection (default 1)
  --rounds <n>         measured rounds; each measures both targets, order alternating (default 2)
  --warmup <s>         unmeasured seconds per target before the rounds (default 5)
  --bus <kind>         in-process (default): the gateway via startService with the in-process bus;
                       nats: the production entry dist/services/gateway/main.js on NATS_URL
                       (default nats://127.0.0.1:4222) with a unique BUS_PREFIX
  --expect-status <n>  the status a valid call gets after the pipeline (default 501: no run engine)
  --profile            run the gateway under --cpu-prof and keep the .cpuprofile
  --dist <dir>         the build to run (default dist/ of this repository)

Database: DATABASE_URL if set, else a fresh database on BENCH_POSTGRES_ADMIN_URL
(default postgres://postgres@127.0.0.1:5432/postgres), dropped afterwards.`;

interface Options {
  settings: LoadSettings;
  rounds: number;
  warmup: number;
  bus: 'in-process' | 'nats';
  expectedStatus: number;
  profile: boolean;
  dist: string;
}

/** Undone in reverse order on success, failure and Ctrl-C alike. */
const cleanups: Array<{ what: string; run: () => Promise<unknown> }> = [];
/** Child logs (and profiles); removed after a clean run without --profile, kept otherwise. */
let workDir: string | undefined;

async function main(): Promise<number> {
  const options = parseOptions(process.argv.slice(2));
  if (!existsSync(path.join(options.dist, 'node_modules', '@runline', 'runtime', 'index.js'))) {
    console.error(`No build in ${options.dist}: run \`npm run build\` first.`);
    return 2;
  }
  const work = mkdtempSync(path.join(os.tmpdir(), 'runline-bench-'));
  workDir = work;
  const { connections, pipelining, duration } = options.settings;
  const estimate = 2 * options.warmup + 2 * options.rounds * duration;
  console.log(
    `Gateway pipeline benchmark: ${connections} connections, pipelining ${pipelining}, ` +
      `${options.rounds} rounds x ${duration} s per target after ${options.warmup} s warm-up (~${estimate} s of load)`,
  );
  console.log(`Node ${process.version}, ${os.cpus().length} CPUs (${os.cpus()[0]?.model.trim() ?? 'unknown'}); logs in ${work}`);

  const database = await openBenchDatabase(process.env);
  cleanups.push({ what: 'drop the database', run: () => database.drop() });
  console.log(`Database: ${database.description}; bus: ${options.bus}`);

  const expressPort = await freePort();
  const express = await startChildServer({
    name: 'express hello',
    args: ['--import', registerHooks, path.join(benchDir, 'servers', 'express-hello.server.ts')],
    env: { ...process.env, PORT: String(expressPort) },
    port: expressPort,
    readyPath: '/',
    logFile: path.join(work, 'express.log'),
  });
  cleanups.push({ what: 'stop express', run: () => express.stop() });

  const consoleJwtSecret = randomBytes(24).toString('hex');
  const gateway = await startGateway(options, database.url, consoleJwtSecret, work);
  cleanups.push({ what: 'stop the gateway', run: () => gateway.stop() });
  console.log(`Started express (pid ${express.pid}) at ${express.url} and the gateway (pid ${gateway.pid}) at ${gateway.url}`);

  const trigger = await setUpFlowTrigger(gateway.url, consoleJwtSecret);
  console.log(`Pipeline check on POST ${trigger.path}:`);
  console.log(indent(await checkPipeline(gateway.url, trigger, TRIGGER_BODY, options.expectedStatus)));

  const baselineTarget: LoadTarget = { label: 'express hello (GET /)', url: `${express.url}/`, method: 'GET', expectedStatus: 200 };
  const pipelineTarget: LoadTarget = {
    label: 'gateway pipeline (POST trigger)',
    url: gateway.url + trigger.path,
    method: 'POST',
    headers: { authorization: `Bearer ${trigger.token}`, 'content-type': 'application/json' },
    body: TRIGGER_BODY,
    expectedStatus: options.expectedStatus,
  };
  const measured: [Measured, Measured] = [
    { target: baselineTarget, server: express, results: [], cpuSeconds: 0 },
    { target: pipelineTarget, server: gateway, results: [], cpuSeconds: 0 },
  ];

  // Warm-up: JIT, connection pools and the gateway's access cache, for both alike.
  for (const entry of measured) {
    const { summary, cpuSeconds } = await measure(entry, { ...options.settings, duration: options.warmup });
    console.log(`warm-up   ${formatRound(entry.target, summary, cpuSeconds)}`);
  }

  // ABBA order, so neither target always runs first (or right after the other).
  for (let round = 0; round < options.rounds; round++) {
    const order = round % 2 === 0 ? measured : [...measured].reverse();
    for (const entry of order) {
      const { result, summary, cpuSeconds } = await measure(entry, options.settings);
      entry.results.push(result);
      entry.cpuSeconds += cpuSeconds ?? Number.NaN;
      console.log(`round ${round + 1}   ${formatRound(entry.target, summary, cpuSeconds)}`);
    }
  }

  const clean = printReport(measured);
  if (!clean) {
    console.log('\nINVALID: some answers had another status or failed (see "other" above); the ratio does not measure the pipeline.');
    console.log(`gateway log (end):\n${indent(logTail(gateway.logFile))}`);
  }

  await runCleanups();
  if (options.profile) {
    console.log(`\nCPU profile of the gateway: ${path.join(work, 'profiles')} (open in Chrome DevTools or speedscope)`);
  } else if (clean) {
    rmSync(work, { recursive: true, force: true });
  } else {
    console.log(`Logs kept in ${work}`);
  }
  return clean ? 0 : 1;
}

async function startGateway(options: Options, databaseUrl: string, consoleJwtSecret: string, work: string): Promise<ChildServer> {
  const profiling = options.profile ? ['--cpu-prof', `--cpu-prof-dir=${path.join(work, 'profiles')}`] : [];
  const port = await freePort();
  const common = { name: 'gateway', port, readyPath: '/health/ready', logFile: path.join(work, 'gateway.log') };
  const environment = {
    ...process.env,
    CONSOLE_JWT_SECRET: consoleJwtSecret,
    SECRETS_KEY: randomBytes(24).toString('hex'),
    DATABASE_URL: databaseUrl,
    PORT: String(port),
  };
  if (options.bus === 'in-process') {
    return startChildServer({
      ...common,
      args: [...profiling, '--import', registerHooks, path.join(benchDir, 'servers', 'gateway.server.ts')],
      env: { ...environment, RUNLINE_DIST: options.dist },
    });
  }
  const natsUrl = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';
  const busPrefix = `bench${randomBytes(5).toString('hex')}`;
  // Registered before the start, so streams are removed even if the gateway fails half-way.
  cleanups.push({ what: `delete streams ${busPrefix}_*`, run: () => deleteStreamsWithPrefix(natsUrl, busPrefix) });
  return startChildServer({
    ...common,
    args: [...profiling, path.join(options.dist, 'services', 'gateway', 'main.js')],
    env: { ...environment, NATS_URL: natsUrl, BUS_PREFIX: busPrefix, HOST: '127.0.0.1', RUN_MIGRATIONS: 'true' },
  });
}

/** A target, the child serving it, and what its measured rounds gave. */
interface Measured {
  target: LoadTarget;
  server: ChildServer;
  results: RawResult[];
  /** CPU seconds the server used during the measured rounds (NaN without /proc). */
  cpuSeconds: number;
}

/** One load run, with the CPU the server used meanwhile. */
async function measure(entry: Measured, settings: LoadSettings): Promise<{ result: RawResult; summary: LoadSummary; cpuSeconds?: number }> {
  const cpuBefore = entry.server.cpuSeconds();
  const result = await runLoad(entry.target, settings);
  const cpuAfter = entry.server.cpuSeconds();
  const cpuSeconds = cpuBefore === undefined || cpuAfter === undefined ? undefined : cpuAfter - cpuBefore;
  return { result, summary: summarize(entry.target, [result]), cpuSeconds };
}

function printReport(measured: [Measured, Measured]): boolean {
  const [baseline, pipeline] = measured.map((entry) => summarize(entry.target, entry.results)) as [LoadSummary, LoadSummary];
  const rows = measured.map(({ target, cpuSeconds }, index) => {
    const summary = index === 0 ? baseline : pipeline;
    return [
      target.label,
      summary.requestsPerSecond.toFixed(0),
      summary.latencyMs.mean.toFixed(2),
      String(summary.latencyMs.p50),
      String(summary.latencyMs.p99),
      formatCpu(cpuSeconds, summary.expected),
      `${target.expectedStatus} x ${summary.expected}`,
      formatOther(summary),
    ];
  });
  console.log();
  printTable([['target', 'req/s', 'mean ms', 'p50 ms', 'p99 ms', 'CPU us/req', 'expected', 'other'], ...rows]);

  const ratio = pipeline.requestsPerSecond / baseline.requestsPerSecond;
  console.log(`\nratio gateway / express: ${percent(ratio)}  goal >= ${percent(GOAL)}: ${ratio >= GOAL ? 'MET' : 'NOT MET'}`);
  // The spread across rounds shows how much other load on the machine moved the figure.
  const perRound = measured[0].results.map((_, round) => {
    const [baselineRound, pipelineRound] = measured.map((entry) => summarize(entry.target, [entry.results[round]!]));
    return percent(pipelineRound!.requestsPerSecond / baselineRound!.requestsPerSecond);
  });
  console.log(`ratio per round: ${perRound.join(', ')}`);
  // With both servers CPU-bound, the inverse ratio of CPU per request predicts the throughput
  // ratio, and other load on the machine moves it much less.
  const cpuRatio = (measured[0].cpuSeconds / baseline.expected) / (measured[1].cpuSeconds / pipeline.expected);
  if (Number.isFinite(cpuRatio)) console.log(`CPU per request, express / gateway: ${percent(cpuRatio)}`);
  return isClean(baseline) && isClean(pipeline);
}

function percent(fraction: number): string {
  return Number.isFinite(fraction) ? `${(fraction * 100).toFixed(1)}%` : '-';
}

function formatRound(target: LoadTarget, summary: LoadSummary, cpuSeconds: number | undefined): string {
  return (
    `${target.label.padEnd(32)} ${summary.requestsPerSecond.toFixed(0).padStart(6)} req/s  ` +
    `p50 ${summary.latencyMs.p50} ms  p99 ${summary.latencyMs.p99} ms  ` +
    `CPU ${formatCpu(cpuSeconds, summary.expected)} us/req  other: ${formatOther(summary)}`
  );
}

function formatCpu(cpuSeconds: number | undefined, requests: number): string {
  return cpuSeconds === undefined || !Number.isFinite(cpuSeconds) || requests === 0 ? '-' : ((cpuSeconds * 1e6) / requests).toFixed(0);
}

function formatOther(summary: LoadSummary): string {
  const parts = Object.entries(summary.unexpected).map(([status, count]) => `${status} x ${count}`);
  if (summary.errors) parts.push(`errors x ${summary.errors}`);
  if (summary.timeouts) parts.push(`timeouts x ${summary.timeouts}`);
  return parts.length ? parts.join(', ') : 'none';
}

function printTable(rows: string[][]): void {
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)));
  for (const row of rows) console.log(row.map((cell, column) => (column === 0 ? cell.padEnd(widths[column]!) : cell.padStart(widths[column]!))).join('  '));
}

function indent(text: string): string {
  return text.replace(/^/gm, '  ');
}

function parseOptions(argv: string[]): Options {
  const { values } = parseArgsOrExplain({
    args: argv,
    options: {
      duration: { type: 'string', default: '10' },
      connections: { type: 'string', default: '10' },
      pipelining: { type: 'string', default: '1' },
      rounds: { type: 'string', default: '2' },
      warmup: { type: 'string', default: '5' },
      bus: { type: 'string', default: 'in-process' },
      'expect-status': { type: 'string', default: String(DEFAULT_EXPECTED_STATUS) },
      profile: { type: 'boolean', default: false },
      dist: { type: 'string', default: path.join(repoRoot, 'dist') },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) {
    console.log(USAGE);
    process.exit(0);
  }
  if (values.bus !== 'in-process' && values.bus !== 'nats') throw new UsageError('--bus must be in-process or nats');
  return {
    settings: {
      duration: positiveInteger('--duration', values.duration),
      connections: positiveInteger('--connections', values.connections),
      pipelining: positiveInteger('--pipelining', values.pipelining),
    },
    rounds: positiveInteger('--rounds', values.rounds),
    warmup: positiveInteger('--warmup', values.warmup),
    bus: values.bus,
    expectedStatus: positiveInteger('--expect-status', values['expect-status']),
    profile: values.profile,
    dist: path.resolve(values.dist),
  };
}

/** parseArgs, with its complaints (unknown flag, missing value) turned into usage errors. */
function parseArgsOrExplain<T extends ParseArgsConfig>(config: T) {
  try {
    return parseArgs(config);
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

function positiveInteger(flag: string, text: string): number {
  const value = Number(text);
  if (!Number.isInteger(value) || value < 1) throw new UsageError(`${flag} must be a positive integer, got "${text}"`);
  return value;
}

class UsageError extends Error {}

async function runCleanups(): Promise<void> {
  while (cleanups.length > 0) {
    const cleanup = cleanups.pop()!;
    try {
      await cleanup.run();
    } catch (error) {
      console.error(`cleanup failed (${cleanup.what}): ${(error as Error).message}`);
    }
  }
}

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    console.error(`\n${signal}: cleaning up`);
    void runCleanups().finally(() => {
      if (workDir) console.error(`Logs kept in ${workDir}`);
      process.exit(130);
    });
  });
}

try {
  process.exitCode = await main();
} catch (error) {
  console.error(error instanceof UsageError ? `${error.message}\n\n${USAGE}` : error);
  await runCleanups();
  if (workDir) console.error(`Logs kept in ${workDir}`);
  process.exitCode = error instanceof UsageError ? 2 : 1;
}
