// Polling benchmark: --triggers polling triggers (default 1,000; issue 34: 10,000) polled every
// --interval ms (default 1000) against a local endpoint. Prints poll-start jitter (arrival at
// the endpoint − due time; p50, p99, max) and the polling service's CPU, beside a baseline
// measured in the same run: a bare poller (servers/bare-poller.server.ts: one timer chain per
// URL, a keep-alive agent, nothing else) in a process of its own, polling the same number of
// URLs on the same schedule, before and after the service. Goals: jitter p99 <= 50 ms; CPU at
// most 1.5 x the bare poller's.
//
// The polling service runs from the build in its own process, on NATS and a fresh database;
// triggers are inserted into its table (due times spread over one interval), so the gateway is
// not part of the measurement. The endpoint answers [] (nothing new): no runs are started.
//
//   npm run build && npm run bench:polling -- [--triggers 1000] [--interval 1000] [--seconds 60] [--baseline-seconds 15]
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { openBenchDatabase } from './support/bench-database.js';
import { freePort, logTail, machineBusySeconds, startChildServer, type ChildServer } from './support/child-server.js';
import { BENCH_DIR, formatUsage, parseArgsOrExplain, positiveInteger, REPO_ROOT } from './support/cli.js';
import { distributionOf, type Distribution } from './support/distribution.js';
import { printFigure } from './support/figures.js';
import { deleteStreamsWithPrefix } from './support/nats-streams.js';
import { PostgresBackendsCpu } from './support/postgres-cpu.js';
import { megabytes, residentBytes } from './support/rss-sampler.js';
import { runBench, type BenchSession } from './support/session.js';

const REGISTER_HOOKS = path.join(BENCH_DIR, 'register.mjs');
/** Polls in the first seconds (start-up, first claims, the bare poller's first connections) are not measured. */
const SERVICE_WARMUP_MS = 5000;
const BASELINE_WARMUP_MS = 2000;
/** The first polls are due this long after the triggers are written or the bare poller is started. */
const FIRST_DUE_AFTER_MS = 3000;
const JITTER_GOAL_MS = 50;
/** Issue 34: the polling service's CPU at most this many times the bare poller's. */
const CPU_RATIO_GOAL = 1.5;
const INSERT_CHUNK = 5000;

const USAGE = `Usage: npm run bench:polling -- [options]

Polls --triggers local URLs every --interval ms, first with a bare poller (the baseline), then
with the polling service from the build, then with the bare poller again; prints the poll start
jitter at the endpoint and the CPU of each. Needs a build (npm run build), PostgreSQL and NATS.

Options:
${formatUsage([
  ['--triggers <n>', 'polling triggers (default 1000)'],
  ['--interval <ms>', 'their intervalMs (default 1000; the API allows at least 1000)'],
  ['--seconds <s>', 'seconds the polling service polls, the first 5 not measured (default 60)'],
  ['--baseline-seconds <s>', 'seconds of each of the two bare poller rounds, the first 2 not measured (default 15)'],
  ['--dist <dir>', 'the build to run (default dist/ of this repository)'],
])}`;

interface Options {
  triggers: number;
  intervalMs: number;
  seconds: number;
  baselineSeconds: number;
  dist: string;
}

/** One measured stretch of polling: which URLs, their first due times, and the CPU used. */
interface Round {
  name: string;
  /** The endpoint path set: `p` (service) or `b` (bare poller). */
  set: string;
  firstDue: number;
  measureFrom: number;
  measureTo: number;
  /** CPU seconds of the poller's process over [measureFrom, measureTo]. */
  cpuSeconds: number;
  /** Of the endpoint, and of the whole machine, over the same stretch. */
  endpointCpuSeconds: number;
  machineCpuSeconds: number;
  /** The service's PostgreSQL backends over the same stretch (the bare poller has no database). */
  databaseCpuSeconds?: number;
  load: string;
  rssBytes: number;
}

async function main(session: BenchSession): Promise<number> {
  const options = parseOptions(process.argv.slice(2));
  console.log(
    `Polling benchmark: ${options.triggers} triggers every ${options.intervalMs} ms (${((options.triggers * 1000) / options.intervalMs).toFixed(0)} polls/s); ` +
      `Node ${process.version}, ${os.cpus().length} CPUs; load average ${loadAverage()}`,
  );
  const endpointPort = await freePort();
  const endpoint = await startChildServer({
    name: 'endpoint',
    args: ['--import', REGISTER_HOOKS, path.join(BENCH_DIR, 'servers', 'polling-endpoint.server.ts')],
    env: { ...process.env, PORT: String(endpointPort) },
    port: endpointPort,
    readyPath: '/ready',
    logFile: path.join(session.workDir, 'endpoint.log'),
  });
  session.onCleanup('stop the endpoint', () => endpoint.stop());

  const rounds: Round[] = [];
  rounds.push(await bareRound(session, options, endpoint, 'bare poller, before'));
  rounds.push(await serviceRound(session, options, endpoint));
  rounds.push(await bareRound(session, options, endpoint, 'bare poller, after'));
  // A poll due just before a round ends arrives a little after it: counted as late, not missing.
  const report = (await (await fetch(`${endpoint.url}/report`)).json()) as Record<string, number[]>;

  console.log(`\n${'round'.padEnd(22)} ${'polls'.padStart(7)} ${'missing'.padStart(7)}  jitter ms: ${'p50'.padStart(5)} ${'p99'.padStart(6)} ${'max'.padStart(7)}   cores  endpoint  elsewhere   RSS MB  load average`);
  const jitters = rounds.map((round) => {
    const { jitter, missing } = jitterOf(report, round, options);
    const seconds = (round.measureTo - round.measureFrom) / 1000;
    const cores = round.cpuSeconds / seconds;
    const elsewhere = (round.machineCpuSeconds - round.cpuSeconds - round.endpointCpuSeconds - (round.databaseCpuSeconds ?? 0)) / seconds;
    console.log(
      `${round.name.padEnd(22)} ${String(jitter.count).padStart(7)} ${String(missing).padStart(7)}             ${jitter.p50.toFixed(0).padStart(5)} ${jitter.p99.toFixed(0).padStart(6)} ${jitter.max.toFixed(0).padStart(7)}  ` +
        `${cores.toFixed(3).padStart(6)}  ${(round.endpointCpuSeconds / seconds).toFixed(2).padStart(8)}  ${elsewhere.toFixed(2).padStart(9)}  ${megabytes(round.rssBytes).padStart(7)}  ${round.load}`,
    );
    // Per poll made: a poller that falls behind makes fewer polls, and its cores alone would flatter it.
    return { jitter, missing, cores, microsPerPoll: (round.cpuSeconds * 1e6) / jitter.count };
  });
  const serviceFigures = jitters[1]!;
  const bareCores = (jitters[0]!.cores + jitters[2]!.cores) / 2;
  const bareMicros = (jitters[0]!.microsPerPoll + jitters[2]!.microsPerPoll) / 2;
  const bareP99 = Math.max(jitters[0]!.jitter.p99, jitters[2]!.jitter.p99);
  const ratio = serviceFigures.microsPerPoll / bareMicros;
  const serviceDatabase = rounds[1]!.databaseCpuSeconds;
  const databaseMicros = serviceDatabase === undefined ? Number.NaN : (serviceDatabase * 1e6) / serviceFigures.jitter.count;
  console.log(
    `\nCPU per poll made: service ${serviceFigures.microsPerPoll.toFixed(0)} µs (and its PostgreSQL backends ${databaseMicros.toFixed(0)} µs, not in the ratio), bare poller ${bareMicros.toFixed(0)} µs (mean of its two rounds; ${bareCores.toFixed(3)} cores); ` +
      `service / bare poller: ${ratio.toFixed(2)} x`,
  );
  const jitterMet = serviceFigures.jitter.p99 <= JITTER_GOAL_MS && serviceFigures.missing === 0;
  console.log(`Goals: jitter p99 ${serviceFigures.jitter.p99.toFixed(0)} ms <= ${JITTER_GOAL_MS} ms, none missing (${serviceFigures.missing}): ${jitterMet ? 'PASS' : 'MISS'}`);
  console.log(`       CPU per poll ${ratio.toFixed(2)} x the bare poller's <= ${CPU_RATIO_GOAL} x: ${ratio <= CPU_RATIO_GOAL ? 'PASS' : 'MISS'}`);
  printFigure({ benchmark: 'polling', figure: `jitter p99, ms (${options.triggers} triggers at ${options.intervalMs} ms)`, value: serviceFigures.jitter.p99, baseline: bareP99, goal: `<= ${JITTER_GOAL_MS}`, met: jitterMet });
  printFigure({ benchmark: 'polling', figure: 'CPU per poll, µs', value: Math.round(serviceFigures.microsPerPoll), baseline: Math.round(bareMicros), goal: `<= ${CPU_RATIO_GOAL} x baseline`, met: ratio <= CPU_RATIO_GOAL });
  const invalid = jitters.some(({ jitter }) => jitter.count === 0);
  if (invalid) console.log(`\nINVALID: a round recorded no polls; polling service log (end):\n${logTail(path.join(session.workDir, 'polling.log'))}`);
  await session.finish({ clean: !invalid, keepWork: false });
  return invalid ? 1 : 0;
}

/** The bare poller in its own process for --baseline-seconds. */
async function bareRound(session: BenchSession, options: Options, endpoint: ChildServer, name: string): Promise<Round> {
  const firstDue = Date.now() + FIRST_DUE_AFTER_MS;
  const stopAt = firstDue + options.baselineSeconds * 1000;
  const port = await freePort();
  const poller = await startChildServer({
    name,
    args: ['--import', REGISTER_HOOKS, path.join(BENCH_DIR, 'servers', 'bare-poller.server.ts')],
    env: {
      ...process.env,
      PORT: String(port),
      POLL_BASE: `${endpoint.url}/b/`,
      POLL_COUNT: String(options.triggers),
      INTERVAL_MS: String(options.intervalMs),
      FIRST_DUE: String(firstDue),
      STOP_AT: String(stopAt),
    },
    port,
    readyPath: '/ready',
    logFile: path.join(session.workDir, `${name.replace(/\W+/g, '-')}.log`),
  });
  session.onCleanup(`stop ${name}`, () => poller.stop());
  const round = await measure(name, 'b', poller, endpoint, firstDue, firstDue + BASELINE_WARMUP_MS, stopAt);
  await sleep(options.intervalMs);
  await poller.stop();
  return round;
}

/** The polling service from the build, on NATS and a fresh database, for --seconds. */
async function serviceRound(session: BenchSession, options: Options, endpoint: ChildServer): Promise<Round> {
  const database = await openBenchDatabase(process.env);
  session.onCleanup('drop the database', () => database.drop());
  const natsUrl = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';
  const prefix = `bench${randomBytes(5).toString('hex')}`;
  session.onCleanup(`delete streams ${prefix}_*`, () => deleteStreamsWithPrefix(natsUrl, prefix));
  const pollingPort = await freePort();
  const polling = await startChildServer({
    name: 'polling',
    args: ['--import', REGISTER_HOOKS, path.join(BENCH_DIR, 'servers', 'polling-service.server.ts')],
    env: {
      ...process.env,
      RUNLINE_DIST: options.dist,
      DATABASE_URL: database.url,
      NATS_URL: natsUrl,
      BUS_PREFIX: prefix,
      PORT: String(pollingPort),
      HOST: '127.0.0.1',
      RUN_MIGRATIONS: 'true',
      SECRETS_KEY: randomBytes(24).toString('hex'),
      OUTBOUND_ALLOWED_CIDRS: '127.0.0.0/8',
      LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn',
    },
    port: pollingPort,
    readyPath: '/health/ready',
    logFile: path.join(session.workDir, 'polling.log'),
  });
  session.onCleanup('stop the polling service', () => polling.stop());

  const firstDue = Date.now() + FIRST_DUE_AFTER_MS;
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  try {
    for (let from = 0; from < options.triggers; from += INSERT_CHUNK) {
      const rows: string[] = [];
      const params: unknown[] = [];
      for (let i = from; i < Math.min(options.triggers, from + INSERT_CHUNK); i++) {
        params.push(`${endpoint.url}/p/${i}`, new Date(firstDueOf(firstDue, i, options)), `bench-${i}`);
        const n = params.length;
        rows.push(
          `(gen_random_uuid(), gen_random_uuid(), '00000000-0000-4000-8000-000000000001', $${n}, 'bench', $${n - 2}, 'id', NULL, ${options.intervalMs}, $${n - 1}, now(), now())`,
        );
      }
      await client.query(
        `INSERT INTO polling.polling_triggers (id, org_id, project_id, poll_key, source, poll_endpoint, dedupe_field, sealed_auth_header, interval_ms, next_poll_at, created_at, updated_at)
         VALUES ${rows.join(', ')}`,
        params,
      );
    }
  } finally {
    await client.end();
  }
  if (Date.now() > firstDue) console.log(`  note: writing the triggers ended ${Date.now() - firstDue} ms after the first was due`);
  const databaseCpu = await PostgresBackendsCpu.open(database.url);
  session.onCleanup('close the database CPU meter', () => databaseCpu.close());
  const round = await measure('polling service', 'p', polling, endpoint, firstDue, firstDue + SERVICE_WARMUP_MS, firstDue + options.seconds * 1000, databaseCpu);
  console.log(`  the service's own view, due -> GET sent (runline_polling_start_lateness_seconds, whole run): ${await startLateness(polling.url)}`);
  // Stopped before the next round, which it would otherwise share the machine with.
  await sleep(options.intervalMs);
  await polling.stop();
  return round;
}

async function measure(
  name: string,
  set: string,
  poller: ChildServer,
  endpoint: ChildServer,
  firstDue: number,
  from: number,
  to: number,
  database?: PostgresBackendsCpu,
): Promise<Round> {
  await sleep(Math.max(0, from - Date.now()));
  const load = loadAverage();
  const stopDatabase = await database?.start();
  const cpu = poller.cpuSeconds() ?? Number.NaN;
  const endpointCpu = endpoint.cpuSeconds() ?? Number.NaN;
  const machine = machineBusySeconds() ?? Number.NaN;
  await sleep(Math.max(0, to - Date.now()));
  const databaseCpuSeconds = (await stopDatabase?.()) ?? undefined;
  return {
    name,
    set,
    firstDue,
    measureFrom: from,
    measureTo: to,
    cpuSeconds: (poller.cpuSeconds() ?? Number.NaN) - cpu,
    endpointCpuSeconds: (endpoint.cpuSeconds() ?? Number.NaN) - endpointCpu,
    machineCpuSeconds: (machineBusySeconds() ?? Number.NaN) - machine,
    databaseCpuSeconds,
    load,
    rssBytes: residentBytes(poller.pid),
  };
}

/**
 * The service's histogram of due -> request sent, as cumulative shares per bucket: a poll sent on
 * time but arriving late waited on the way out (sockets, event loop); one sent late was claimed or
 * started late.
 */
async function startLateness(serviceUrl: string): Promise<string> {
  try {
    const text = await (await fetch(`${serviceUrl}/metrics`)).text();
    const buckets = [...text.matchAll(/^runline_polling_start_lateness_seconds_bucket\{(?:[^}]*,)?le="([^"]+)"[^}]*\} (\d+)/gm)].map((m) => [m[1]!, Number(m[2])] as const);
    const total = buckets.find(([le]) => le === '+Inf')?.[1] ?? 0;
    if (total === 0) return 'no polls recorded';
    return buckets
      .filter(([le]) => le !== '+Inf')
      .map(([le, count]) => `<= ${Number(le) * 1000} ms ${((count / total) * 100).toFixed(1)}%`)
      .join(', ');
  } catch (error) {
    return `not read (${(error as Error).message})`;
  }
}

function firstDueOf(firstDue: number, i: number, options: Options): number {
  return firstDue + Math.floor((i * options.intervalMs) / options.triggers);
}

/**
 * Jitter (arrival − due) of every poll of `round` due in its measured stretch, and how many
 * such due times saw no poll. An arrival belongs to the due time nearest it.
 */
function jitterOf(report: Record<string, number[]>, round: Round, options: Options): { jitter: Distribution; missing: number } {
  const jitter: number[] = [];
  let missing = 0;
  const interval = options.intervalMs;
  for (let i = 0; i < options.triggers; i++) {
    const first = firstDueOf(round.firstDue, i, options);
    const arrivals = (report[`${round.set}/${i}`] ?? []).filter((at) => at >= round.measureFrom - interval / 2 && at < round.measureTo + interval / 2);
    const seen = new Set<number>();
    for (const at of arrivals) {
      const k = Math.round((at - first) / interval);
      const due = first + k * interval;
      if (due >= round.measureFrom && due < round.measureTo) {
        seen.add(k);
        jitter.push(at - due);
      }
    }
    const expected = Math.ceil((round.measureTo - first) / interval) - Math.ceil((round.measureFrom - first) / interval);
    missing += Math.max(0, expected - seen.size);
  }
  return { jitter: distributionOf(jitter), missing };
}

function loadAverage(): string {
  return os
    .loadavg()
    .map((value) => value.toFixed(2))
    .join(' ');
}

function parseOptions(argv: string[]): Options {
  const { values } = parseArgsOrExplain({
    args: argv,
    options: {
      triggers: { type: 'string', default: '1000' },
      interval: { type: 'string', default: '1000' },
      seconds: { type: 'string', default: '60' },
      'baseline-seconds': { type: 'string', default: '15' },
      dist: { type: 'string', default: path.join(REPO_ROOT, 'dist') },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) {
    console.log(USAGE);
    process.exit(0);
  }
  return {
    triggers: positiveInteger('--triggers', values.triggers),
    intervalMs: positiveInteger('--interval', values.interval),
    seconds: positiveInteger('--seconds', values.seconds),
    baselineSeconds: positiveInteger('--baseline-seconds', values['baseline-seconds']),
    dist: path.resolve(values.dist),
  };
}

await runBench(USAGE, main);
