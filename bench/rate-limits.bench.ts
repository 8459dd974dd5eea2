// Rate-limit benchmark: the gateway's dry-run flow trigger with the per-token rate
// limit on (one shared counter upsert in PostgreSQL per batch of requests) against the same
// system with it off (RATE_LIMITS=off), both measured in the same run. Prints both
// throughputs and the overhead; the goal is at most 10%.
//
//   npm run build && npm run bench:rate-limits -- [--duration 10] [--connections 10] ...
//
// The two systems run in child processes of their own (each with its own database) and the
// load comes from this process; only one of them is under load at a time. bench/README.md
// explains what is measured.
import os from 'node:os';
import {
  busKind,
  COMMON_OPTION_SPECS,
  COMMON_USAGE,
  commonOptions,
  formatUsage,
  parseArgsOrExplain,
  type BusKind,
  type CommonOptions,
} from './support/cli.js';
import { openBenchDatabase } from './support/bench-database.js';
import { logTail } from './support/child-server.js';
import { authorizedJson, checkAnswers, pipelineProbes, setUpFlowTrigger, type FlowTrigger } from './support/console-setup.js';
import type { LoadTarget } from './support/load.js';
import { PostgresBackendsCpu } from './support/postgres-cpu.js';
import { startLimitedSystem, type LimitedSystem } from './support/rate-limit-system.js';
import { printFigure } from './support/figures.js';
import { indent, percent, printComparison, throughputRatios } from './support/report.js';
import { measured, runRounds, type Measured } from './support/rounds.js';
import { hasBuild } from './support/servers.js';
import { runBench, type BenchSession } from './support/session.js';

/** At most 10% fewer requests per second with the limit on. */
const GOAL_OVERHEAD = 0.1;
const TRIGGER_BODY = JSON.stringify({ event: 'order.created', customerId: 'c-1', orderId: '42', dryRun: true });

const USAGE = `Usage: npm run bench:rate-limits -- [options]
   or: node --import ./bench/register.mjs bench/rate-limits.bench.ts [options]

${formatUsage([
  ['--connections <n>', 'concurrent connections (default 10)'],
  ...COMMON_USAGE,
  ['--bus <kind>', 'in-process (default) or nats (NATS_URL, default nats://127.0.0.1:4222)'],
])}

Database: DATABASE_URL if set (both systems share it), else one fresh database per system on
BENCH_POSTGRES_ADMIN_URL (default postgres://postgres@127.0.0.1:5432/postgres), dropped afterwards.`;

interface Options extends CommonOptions {
  bus: BusKind;
}

async function main(session: BenchSession): Promise<number> {
  const options = parseOptions(process.argv.slice(2));
  if (!hasBuild(options.dist)) {
    console.error(`No build in ${options.dist}: run \`npm run build\` first.`);
    return 2;
  }
  const { connections, pipelining, duration } = options.settings;
  const estimate = 2 * options.warmup + 2 * options.rounds * duration;
  console.log(
    `Rate-limit benchmark: ${connections} connections, pipelining ${pipelining}, ` +
      `${options.rounds} rounds x ${duration} s per target after ${options.warmup} s warm-up (~${estimate} s of load)`,
  );
  console.log(`Node ${process.version}, ${os.cpus().length} CPUs (${os.cpus()[0]?.model.trim() ?? 'unknown'}); logs in ${session.workDir}`);

  const entries: Measured[] = [];
  const systems: LimitedSystem[] = [];
  for (const rateLimits of ['off', 'on'] as const) {
    const database = await openBenchDatabase(process.env);
    session.onCleanup(`drop the database of limits ${rateLimits}`, () => database.drop());
    const system = await startLimitedSystem(session, { name: `system-limits-${rateLimits}`, rateLimits, bus: options.bus, dist: options.dist, databaseUrl: database.url });
    systems.push(system);
    console.log(`Started gateway + invocation with RATE_LIMITS=${rateLimits} (pid ${system.server.pid}) at ${system.server.url}; ${database.description}`);
    // The console setup gives the project the API's highest limit (1,000,000 per 60 s), so the
    // limited system counts every request and refuses none.
    const trigger = await setUpFlowTrigger(system.server.url, system.consoleJwtSecret);
    const url = system.server.url + trigger.path;
    console.log(`Pipeline check, limits ${rateLimits}:`);
    console.log(indent(await checkAnswers(pipelineProbes(url, trigger, TRIGGER_BODY, { expectedStatus: 200, checkBody: validDryRun }))));
    console.log(indent(await checkRateLimitHeader(url, trigger, rateLimits)));
    const databaseCpu = await PostgresBackendsCpu.open(database.url);
    session.onCleanup(`close the database CPU meter (limits ${rateLimits})`, () => databaseCpu.close());
    const target: LoadTarget = {
      label: `dry-run trigger, rate limits ${rateLimits}`,
      url,
      method: 'POST',
      headers: authorizedJson(trigger),
      body: TRIGGER_BODY,
      expectedStatus: 200,
    };
    entries.push(measured(target, system.server, { database: databaseCpu }));
  }
  const pair = entries as [Measured, Measured];
  await runRounds(pair, options.settings, options.rounds, options.warmup);

  console.log();
  const { baseline, subject, clean } = printComparison(pair);
  const { ratio, perRound, cpuRatio } = throughputRatios(pair);
  const overhead = 1 - ratio;
  printFigure({ benchmark: 'rate-limits', figure: 'limiter on, req/s (baseline: RATE_LIMITS=off)', value: Math.round(subject.requestsPerSecond), baseline: Math.round(baseline.requestsPerSecond), goal: `overhead <= ${percent(GOAL_OVERHEAD)}`, met: overhead <= GOAL_OVERHEAD });
  console.log(`\nthroughput on / off: ${percent(ratio)}  overhead ${percent(overhead)}  goal <= ${percent(GOAL_OVERHEAD)}: ${overhead <= GOAL_OVERHEAD ? 'MET' : 'NOT MET'}`);
  console.log(`ratio per round: ${perRound.map(percent).join(', ')}`);
  if (Number.isFinite(cpuRatio)) console.log(`CPU per request, off / on: ${percent(cpuRatio)}`);
  if (!clean) {
    console.log('\nINVALID: some answers had another status or failed (see "other" above).');
    for (const system of systems) console.log(`${system.server.logFile} (end):\n${indent(logTail(system.server.logFile))}`);
  }
  await session.finish({ clean, keepWork: false });
  return clean ? 0 : 1;
}

function validDryRun(body: unknown): string | undefined {
  return typeof body === 'object' && body !== null && (body as Record<string, unknown>).status === 'VALID' ? undefined : 'expected a VALID dry run';
}

/** With limits on, the answer carries X-RateLimit-Limit 1000000 (the project's limit); off, none. */
async function checkRateLimitHeader(url: string, trigger: FlowTrigger, rateLimits: 'on' | 'off'): Promise<string> {
  const response = await fetch(url, { method: 'POST', headers: authorizedJson(trigger), body: TRIGGER_BODY });
  await response.text();
  const limit = response.headers.get('x-ratelimit-limit');
  const expected = rateLimits === 'on' ? '1000000' : null;
  const line = `X-RateLimit-Limit -> ${limit ?? '(none)'}`;
  if (response.status !== 200 || limit !== expected) throw new Error(`check failed: ${line}, status ${response.status} (expected ${expected ?? 'no header'})`);
  return line;
}

function parseOptions(argv: string[]): Options {
  const { values } = parseArgsOrExplain({
    args: argv,
    options: { ...COMMON_OPTION_SPECS, bus: { type: 'string', default: 'in-process' } },
  });
  if (values.help) {
    console.log(USAGE);
    process.exit(0);
  }
  return { ...commonOptions(values), bus: busKind(values.bus) };
}

await runBench(USAGE, main);
