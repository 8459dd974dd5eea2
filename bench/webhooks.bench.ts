// Inbound webhooks benchmark (issue 18): signed deliveries accepted per second by an inbound
// hook's public URL, POST /v1/hooks/{id}, against the async flow trigger
// (POST /v1/orgs/{orgId}/flows/{projectId}/trigger-async with an API token) measured in the same
// run on the same system: gateway, invocation and webhook service in one process on NATS, real
// PostgreSQL. Both start the same run of the same flow; the hook adds the webhook service's
// verification (a NATS request/reply: hook lookup, HMAC; the delivery id becomes the run's idempotency key).
// Goals: the hook at least 90% of the async trigger's req/s, and its p99 at most 25 ms.
//
//   npm run build && npm run bench:webhooks -- [--duration 10] [--connections 10] ...
//
// bench/README.md explains what is measured and how.
import os from 'node:os';
import pg from 'pg';
import { AsyncRuns } from './support/async-runs.js';
import { openBenchDatabase } from './support/bench-database.js';
import { logTail } from './support/child-server.js';
import {
  busKind,
  COMMON_OPTION_SPECS,
  COMMON_USAGE,
  commonOptions,
  formatUsage,
  parseArgsOrExplain,
  positiveInteger,
  type BusKind,
  type CommonOptions,
} from './support/cli.js';
import { authorizedJson, checkAnswers, setUpFlowTrigger, type Probe } from './support/console-setup.js';
import { profileFiles, summarizeProfile } from './support/cpu-profile.js';
import { createBenchHook, type BenchHook } from './support/hook-setup.js';
import { percentile, runAtRate, type RateRun } from './support/constant-rate.js';
import { summarize, type LoadTarget } from './support/load.js';
import { PostgresBackendsCpu } from './support/postgres-cpu.js';
import { printFigure } from './support/figures.js';
import { indent, ms, percent, printComparison, throughputRatios } from './support/report.js';
import { measured, runRounds, type Measured } from './support/rounds.js';
import { hasBuild, startSystem } from './support/servers.js';
import { runBench, type BenchSession } from './support/session.js';
import { signDelivery, SignedDeliveries } from './support/signed-deliveries.js';

const RATIO_GOAL = 0.9;
const P99_GOAL_MS = 25;
/** The runs benchmark's body: every call runs the flow (EVERY_MATCH), on both routes. */
const BODY = JSON.stringify({ event: 'order.created', customerId: 'c-1', orderId: '42', enrollmentPolicy: 'EVERY_MATCH' });

const USAGE = `Usage: npm run bench:webhooks -- [options]
   or: node --import ./bench/register.mjs bench/webhooks.bench.ts [options]

${formatUsage([
  ['--connections <n>', 'concurrent connections (default 10)'],
  ...COMMON_USAGE,
  ['--bus <kind>', 'nats (default; NATS_URL, default nats://127.0.0.1:4222) or in-process'],
  ['--signed <n>', 'deliveries signed ahead of each load run of the hook (default 40000)'],
  ['--drain-timeout <s>', 'how long to wait for accepted runs after each load run (default 300)'],
  ['--latency-share <f>', 'the latency phase\'s constant rate, as a share of the async trigger\'s measured req/s (default 0.6)'],
  ['--latency-seconds <s>', 'each route\'s constant-rate load in the latency phase (default 20)'],
])}

Database: DATABASE_URL if set, else a fresh database on BENCH_POSTGRES_ADMIN_URL
(default postgres://postgres@127.0.0.1:5432/postgres), dropped afterwards.`;

interface Options extends CommonOptions {
  bus: BusKind;
  signed: number;
  drainTimeoutMs: number;
  latencyShare: number;
  latencySeconds: number;
}

async function main(session: BenchSession): Promise<number> {
  const options = parseOptions(process.argv.slice(2));
  if (!hasBuild(options.dist)) {
    console.error(`No build in ${options.dist}: run \`npm run build\` first.`);
    return 2;
  }
  const { connections, pipelining, duration } = options.settings;
  console.log(
    `Webhooks benchmark: ${connections} connections, pipelining ${pipelining}, ${options.rounds} rounds x ${duration} s per target ` +
      `after ${options.warmup} s warm-up (~${2 * options.warmup + 2 * options.rounds * duration} s of load, plus draining)`,
  );
  console.log(`Node ${process.version}, ${os.cpus().length} CPUs (${os.cpus()[0]?.model.trim() ?? 'unknown'}); load average ${os.loadavg().map((n) => n.toFixed(2)).join(' ')}; logs in ${session.workDir}`);

  const database = await openBenchDatabase(process.env);
  session.onCleanup('drop the database', () => database.drop());
  const system = await startSystem(session, { bus: options.bus, profile: options.profile, dist: options.dist, databaseUrl: database.url, webhook: true });
  console.log(`Started gateway + invocation + webhook (pid ${system.server.pid}) at ${system.server.url}; ${database.description}; bus: ${options.bus}`);

  const trigger = await setUpFlowTrigger(system.server.url, system.consoleJwtSecret);
  const hook = await createBenchHook(system.server.url, system.consoleJwtSecret, trigger);
  const asyncUrl = `${system.server.url}${trigger.path}-async`;
  console.log('Route checks:');
  console.log(indent(await checkAnswers(probes(asyncUrl, trigger.token, hook))));

  const runs = await AsyncRuns.open(database.url);
  session.onCleanup('close the run watcher', () => runs.close());
  const databaseCpu = await PostgresBackendsCpu.open(database.url, [runs.backendPid]);
  session.onCleanup('close the database CPU meter', () => databaseCpu.close());
  await runs.waitUntilDone(options.drainTimeoutMs);

  const deliveries = new SignedDeliveries(hook.secret, BODY, options.signed);
  console.log(`signed ${options.signed} deliveries in ${deliveries.refill().toFixed(2)} s`);
  // 202s of the hook over every load run, warm-up included, to compare with what was recorded.
  let hookAccepted = 0;
  const drain = async (accepted: number, refill: boolean): Promise<string> => {
    const drained = await runs.waitUntilDone(options.drainTimeoutMs);
    const signing = refill ? `; signed the next ${options.signed} in ${deliveries.refill().toFixed(2)} s` : '';
    return (
      `backlog: ${drained.before.open} runs open when the load stopped; ` +
      (drained.done ? `all finished ${drained.seconds.toFixed(1)} s later` : `${drained.after.open} STILL OPEN after ${drained.seconds.toFixed(0)} s`) +
      ` (${accepted} accepted)${signing}`
    );
  };
  const asyncTarget: LoadTarget = { label: 'async trigger (POST trigger-async)', url: asyncUrl, method: 'POST', headers: authorizedJson(trigger), body: BODY, expectedStatus: 202 };
  const hookTarget: LoadTarget = {
    label: 'inbound hook (POST /v1/hooks/{id})',
    url: hook.url,
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: BODY,
    expectedStatus: 202,
    nextRequest: () => deliveries.next(),
  };
  const entries: [Measured, Measured] = [
    measured(asyncTarget, system.server, { database: databaseCpu, afterLoad: (measurement) => drain(measurement.summary.expected, false) }),
    measured(hookTarget, system.server, {
      database: databaseCpu,
      afterLoad: (measurement) => {
        hookAccepted += measurement.summary.expected;
        return drain(measurement.summary.expected, true);
      },
    }),
  ];
  await runRounds(entries, options.settings, options.rounds, options.warmup);

  console.log(`\nInbound hook vs async trigger, ${connections} connections, ${options.rounds} rounds:`);
  const { subject, clean } = printComparison(entries);
  const { ratio, perRound, cpuRatio } = throughputRatios(entries);
  console.log(`ratio per round: ${perRound.map(percent).join(', ')}; CPU per request, async trigger / hook: ${percent(cpuRatio)}`);
  if (deliveries.signedDuringLoad > 0) console.log(`note: ${deliveries.signedDuringLoad} deliveries were signed during a load run (raise --signed)`);

  // At saturation every route's latency is queueing: 10 connections at R req/s wait 10/R s on
  // average whatever the route. The p99 goal is judged where it means something, below
  // saturation: both routes at one constant arrival rate, a share of the async trigger's.
  const latencyRate = Math.max(10, Math.round((summarize(asyncTarget, entries[0].results).requestsPerSecond * options.latencyShare) / 10) * 10);
  console.log(`\nLatency at a constant ${latencyRate} req/s (${percent(options.latencyShare)} of the async trigger's), ${options.latencySeconds} s per route:`);
  const latency: Record<'async' | 'hook', RateRun> = {} as Record<'async' | 'hook', RateRun>;
  for (const [key, target] of [['async', asyncTarget], ['hook', hookTarget]] as const) {
    const run = await runAtRate(target, latencyRate, options.latencySeconds);
    latency[key] = run;
    if (key === 'hook') hookAccepted += run.expected;
    const offered = latencyRate * options.latencySeconds;
    const other = Object.entries(run.unexpected).map(([status, count]) => `${count} x ${status}`).join(', ') || 'none';
    console.log(
      `  ${target.label.padEnd(36)} ${run.expected} of ${offered} answered ${target.expectedStatus}  p50 ${ms(percentile(run.latenciesMs, 0.5))} ms  ` +
        `p99 ${ms(percentile(run.latenciesMs, 0.99))} ms  worst 10 s p99 ${ms(Math.max(...run.windowP99Ms))} ms  other: ${other}, errors ${run.errors}`,
    );
    console.log(`    ${await drain(run.expected, key === 'hook')}`);
  }
  const latencyClean = (['async', 'hook'] as const).every(
    (key) => Object.keys(latency[key].unexpected).length === 0 && latency[key].errors === 0 && latency[key].expected >= 0.95 * latencyRate * options.latencySeconds,
  );
  const hookP99AtRate = percentile(latency.hook.latenciesMs, 0.99);

  const final = await runs.counts();
  const recorded = await recordedDeliveries(database.url);
  // The probes accepted one delivery (its repeat was refused as such). A load run stops with up to
  // connections x pipelining requests in flight (the latency phase: its lanes' connections),
  // which the system may still accept unseen.
  const unseen = connections * pipelining * (1 + options.rounds) + latency.hook.connections;
  const deliveriesOk = recorded.runs === recorded.deliveryIds && recorded.runs >= hookAccepted + 1 && recorded.runs <= hookAccepted + 1 + unseen;
  const runsOk = final.failed === 0 && final.other === 0 && final.open === 0;
  console.log('\nResults');
  const results = [
    { line: `inbound hook ${percent(ratio)} of the async trigger's req/s (goal >= ${percent(RATIO_GOAL)})`, met: ratio >= RATIO_GOAL },
    { line: `inbound hook p99 ${ms(hookP99AtRate)} ms at a constant ${latencyRate} req/s (goal <= ${P99_GOAL_MS} ms)`, met: hookP99AtRate <= P99_GOAL_MS },
  ];
  console.log(`  (at saturation, for information: inbound hook p99 ${ms(subject.latencyMs.p99)} ms, async trigger p99 ${ms(summarize(asyncTarget, entries[0].results).latencyMs.p99)} ms)`);
  for (const result of results) console.log(`  ${result.line}: ${result.met ? 'PASS' : 'MISS'}`);
  printFigure({ benchmark: 'webhooks', figure: "inbound hook, req/s (baseline: async trigger)", value: Math.round(subject.requestsPerSecond), baseline: Math.round(summarize(asyncTarget, entries[0].results).requestsPerSecond), goal: `>= ${percent(RATIO_GOAL)} of baseline`, met: ratio >= RATIO_GOAL });
  printFigure({ benchmark: 'webhooks', figure: `inbound hook p99 at ${latencyRate} req/s, ms`, value: Number(ms(hookP99AtRate)), baseline: Number(ms(percentile(latency.async.latenciesMs, 0.99))), goal: `<= ${P99_GOAL_MS}`, met: hookP99AtRate <= P99_GOAL_MS });
  console.log(`  async runs at the end: ${final.succeeded} succeeded, ${final.failed} failed, ${final.open} queued or running, ${final.other} other`);
  console.log(
    `  hook deliveries: ${hookAccepted + 1} answered 202, ${recorded.runs} runs started by a hook and ${recorded.deliveryIds} delivery keys recorded ` +
      `(at most ${unseen} more than the 202s: requests in flight when a load stopped)`,
  );

  const valid = clean && latencyClean && runsOk && deliveriesOk;
  if (!valid) {
    const why = !clean || !latencyClean
      ? 'some answers had another status or failed, or a constant rate was not answered (see above).'
      : !runsOk
        ? 'not every accepted run succeeded in time.'
        : 'the webhook runs or delivery ids recorded do not match the 202s answered.';
    console.log(`\nINVALID: ${why}`);
    console.log(`system log (end):\n${indent(logTail(system.server.logFile))}`);
  }
  await session.finish({ clean: valid, keepWork: options.profile });
  if (options.profile) {
    for (const file of profileFiles(system.profileDir)) {
      console.log(`\nCPU profile of the system: ${file}`);
      console.log(`async trigger rounds:\n${indent(summarizeProfile(file, entries[0].windows))}`);
      console.log(`inbound hook rounds:\n${indent(summarizeProfile(file, entries[1].windows))}`);
    }
  }
  return valid ? 0 : 1;
}

/** Before any load: each route refuses what it must and accepts what the load will send. */
function probes(asyncUrl: string, token: string, hook: BenchHook): Probe[] {
  const json = { 'content-type': 'application/json' };
  const now = Math.floor(Date.now() / 1000);
  const once = signDelivery(hook.secret, BODY, now, 'bench-probe-1');
  const queued = (body: unknown) =>
    typeof body === 'object' && body !== null && (body as Record<string, unknown>).status === 'QUEUED' ? undefined : 'expected a QUEUED run';
  return [
    { what: 'async trigger, no token', url: asyncUrl, headers: json, body: BODY, expectedStatus: 401 },
    { what: 'async trigger', url: asyncUrl, headers: { ...json, authorization: `Bearer ${token}` }, body: BODY, expectedStatus: 202, checkBody: queued },
    { what: 'hook, unsigned', url: hook.url, headers: json, body: BODY, expectedStatus: 401 },
    { what: 'hook, signed with another secret', url: hook.url, headers: signDelivery(`${hook.secret}x`, BODY, now, 'bench-probe-0').headers, body: BODY, expectedStatus: 401 },
    { what: 'hook, signed', url: hook.url, headers: once.headers, body: BODY, expectedStatus: 202, checkBody: queued },
    { what: 'hook, the same delivery again', url: hook.url, headers: once.headers, body: BODY, expectedStatus: 409 },
  ];
}

/** Idempotency keys of hook deliveries, and runs a hook started (no token: the async trigger's have one). */
async function recordedDeliveries(databaseUrl: string): Promise<{ runs: number; deliveryIds: number }> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const runs = await client.query<{ n: number }>(`SELECT count(*)::int AS n FROM invocation.invocation_views WHERE trigger_source = 'WEBHOOK' AND started_by_token_id IS NULL`);
    const ids = await client.query<{ n: number }>(`SELECT count(*)::int AS n FROM invocation.idempotency_keys WHERE key LIKE 'hook:%'`);
    return { runs: runs.rows[0]?.n ?? 0, deliveryIds: ids.rows[0]?.n ?? 0 };
  } finally {
    await client.end();
  }
}

function parseOptions(argv: string[]): Options {
  const { values } = parseArgsOrExplain({
    args: argv,
    options: {
      ...COMMON_OPTION_SPECS,
      bus: { type: 'string', default: 'nats' },
      signed: { type: 'string', default: '40000' },
      'drain-timeout': { type: 'string', default: '300' },
      'latency-share': { type: 'string', default: '0.6' },
      'latency-seconds': { type: 'string', default: '20' },
    },
  });
  if (values.help) {
    console.log(USAGE);
    process.exit(0);
  }
  return {
    ...commonOptions(values),
    bus: busKind(values.bus),
    signed: positiveInteger('--signed', values.signed),
    drainTimeoutMs: positiveInteger('--drain-timeout', values['drain-timeout']) * 1000,
    latencyShare: shareOf('--latency-share', values['latency-share']),
    latencySeconds: positiveInteger('--latency-seconds', values['latency-seconds']),
  };
}

function shareOf(flag: string, value: string): number {
  const share = Number(value);
  if (!(share > 0 && share <= 1)) throw new Error(`${flag} must be a number above 0 and at most 1, not ${value}`);
  return share;
}

await runBench(USAGE, main);
