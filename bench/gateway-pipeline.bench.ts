// Gateway pipeline benchmark: the external flow trigger route as a dry run (version, token,
// project, master switch, scope, type and body checks, then one request/reply to the
// invocation service, which validates the trigger and records nothing) against a bare express
// 5 hello route measured in the same run. Prints both throughputs and their ratio; the goal is
// at least 70%.
//
//   npm run build && npm run bench:gateway -- [--duration 10] [--connections 10] ...
//
// Both servers run in child processes and the load comes from this process, so the two cores
// are shared the same way for both. bench/README.md explains what is measured and how.
import os from 'node:os';
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
import { openBenchDatabase } from './support/bench-database.js';
import { logTail } from './support/child-server.js';
import { authorizedJson, checkAnswers, pipelineProbes, setUpFlowTrigger } from './support/console-setup.js';
import { profileFiles, summarizeProfile } from './support/cpu-profile.js';
import type { LoadTarget } from './support/load.js';
import { PostgresBackendsCpu } from './support/postgres-cpu.js';
import { printFigure } from './support/figures.js';
import { indent, percent, printComparison, throughputRatios } from './support/report.js';
import { measured, runRounds, type Measured } from './support/rounds.js';
import { hasBuild, startExpressHello, startSystem } from './support/servers.js';
import { runBench, type BenchSession } from './support/session.js';

const GOAL = 0.7;
/** dryRun: the invocation service checks the trigger and answers without recording a run. */
const TRIGGER_BODY = JSON.stringify({ event: 'order.created', customerId: 'c-1', orderId: '42', dryRun: true });
/** A valid dry run's answer: `{ invocationId: null, status: 'VALID', dryRun: true, result }`. */
const DEFAULT_EXPECTED_STATUS = 200;

const USAGE = `Usage: npm run bench:gateway -- [options]
   or: node --import ./bench/register.mjs bench/gateway-pipeline.bench.ts [options]

${formatUsage([
  ['--connections <n>', 'concurrent connections (default 10)'],
  ...COMMON_USAGE,
  ['--bus <kind>', 'in-process (default) or nats (NATS_URL, default nats://127.0.0.1:4222,\nwith a unique BUS_PREFIX): the bus gateway and invocation service share'],
  ['--expect-status <n>', 'the status a valid dry run gets (default 200)'],
])}

Database: DATABASE_URL if set, else a fresh database on BENCH_POSTGRES_ADMIN_URL
(default postgres://postgres@127.0.0.1:5432/postgres), dropped afterwards.`;

interface Options extends CommonOptions {
  bus: BusKind;
  expectedStatus: number;
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
    `Gateway pipeline benchmark: ${connections} connections, pipelining ${pipelining}, ` +
      `${options.rounds} rounds x ${duration} s per target after ${options.warmup} s warm-up (~${estimate} s of load)`,
  );
  console.log(`Node ${process.version}, ${os.cpus().length} CPUs (${os.cpus()[0]?.model.trim() ?? 'unknown'}); logs in ${session.workDir}`);

  const database = await openBenchDatabase(process.env);
  session.onCleanup('drop the database', () => database.drop());
  console.log(`Database: ${database.description}; bus: ${options.bus}`);

  const express = await startExpressHello(session);
  const system = await startSystem(session, { bus: options.bus, profile: options.profile, dist: options.dist, databaseUrl: database.url });
  console.log(`Started express (pid ${express.pid}) at ${express.url} and gateway + invocation (pid ${system.server.pid}) at ${system.server.url}`);

  const trigger = await setUpFlowTrigger(system.server.url, system.consoleJwtSecret);
  const url = system.server.url + trigger.path;
  console.log(`Pipeline check on POST ${trigger.path} (dry run):`);
  const dryRunAnswer = (body: unknown) => (isRecord(body) && body.dryRun === true && body.status === 'VALID' ? undefined : 'expected a VALID dry run');
  const valid = { expectedStatus: options.expectedStatus, checkBody: options.expectedStatus === DEFAULT_EXPECTED_STATUS ? dryRunAnswer : undefined };
  console.log(indent(await checkAnswers(pipelineProbes(url, trigger, TRIGGER_BODY, valid))));

  const baselineTarget: LoadTarget = { label: 'express hello (GET /)', url: `${express.url}/`, method: 'GET', expectedStatus: 200 };
  const pipelineTarget: LoadTarget = {
    label: 'gateway pipeline (dry-run trigger)',
    url,
    method: 'POST',
    headers: authorizedJson(trigger),
    body: TRIGGER_BODY,
    expectedStatus: options.expectedStatus,
  };
  const databaseCpu = await PostgresBackendsCpu.open(database.url);
  session.onCleanup('close the database CPU meter', () => databaseCpu.close());
  const entries: [Measured, Measured] = [measured(baselineTarget, express), measured(pipelineTarget, system.server, { database: databaseCpu })];
  await runRounds(entries, options.settings, options.rounds, options.warmup);

  console.log();
  const { baseline, subject, clean } = printComparison(entries);
  const { ratio, perRound, cpuRatio } = throughputRatios(entries);
  console.log(`\nratio gateway / express: ${percent(ratio)}  goal >= ${percent(GOAL)}: ${ratio >= GOAL ? 'MET' : 'NOT MET'}`);
  printFigure({ benchmark: 'gateway', figure: `dry run, req/s (${options.bus}; baseline: express hello)`, value: Math.round(subject.requestsPerSecond), baseline: Math.round(baseline.requestsPerSecond), goal: `>= ${percent(GOAL)} of baseline`, met: ratio >= GOAL });
  console.log(`ratio per round: ${perRound.map(percent).join(', ')}`);
  if (Number.isFinite(cpuRatio)) console.log(`CPU per request, express / gateway: ${percent(cpuRatio)}`);
  if (!clean) {
    console.log('\nINVALID: some answers had another status or failed (see "other" above); the ratio does not measure the pipeline.');
    console.log(`system log (end):\n${indent(logTail(system.server.logFile))}`);
  }

  await session.finish({ clean, keepWork: options.profile });
  if (options.profile) {
    for (const file of profileFiles(system.profileDir)) {
      console.log(`\nCPU profile of the system (open in Chrome DevTools or speedscope): ${file}`);
      console.log(`Measured gateway rounds only:\n${indent(summarizeProfile(file, entries[1].windows))}`);
    }
  }
  return clean ? 0 : 1;
}

function parseOptions(argv: string[]): Options {
  const { values } = parseArgsOrExplain({
    args: argv,
    options: {
      ...COMMON_OPTION_SPECS,
      bus: { type: 'string', default: 'in-process' },
      'expect-status': { type: 'string', default: String(DEFAULT_EXPECTED_STATUS) },
    },
  });
  if (values.help) {
    console.log(USAGE);
    process.exit(0);
  }
  return {
    ...commonOptions(values),
    bus: busKind(values.bus),
    expectedStatus: positiveInteger('--expect-status', values['expect-status']),
  };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}

await runBench(USAGE, main);
