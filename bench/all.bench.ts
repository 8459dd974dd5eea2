// Every benchmark, one after the other, and one table of their headline figures: benchmark,
// figure, value, its baseline from the same run, the ratio, the goal. Each benchmark prints its
// headline figures as `FIGURE {json}` lines (support/figures.ts); this collects them. With
// --quick each runs briefly, with small arguments (about 12 minutes in all on 2 cores);
// without it, each with its own defaults (hours). Each benchmark's full output goes to a log
// file (the path is printed), so a figure can be read in its context.
//
//   npm run build && npm run bench:all -- --quick [--only scheduling,polling] [--skip sustained]
import { spawn } from 'node:child_process';
import { createWriteStream, existsSync, mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { BENCH_DIR, formatUsage, parseArgsOrExplain, REPO_ROOT, UsageError } from './support/cli.js';
import { FIGURE_PREFIX, type Figure } from './support/figures.js';
import { printTable } from './support/report.js';

/** Each benchmark: its file, and the arguments of a brief run. */
const BENCHMARKS: Array<{ name: string; file: string; quick: string[] }> = [
  { name: 'runs', file: 'runs.bench.ts', quick: ['--duration', '5', '--rounds', '1', '--warmup', '2'] },
  { name: 'gateway', file: 'gateway-pipeline.bench.ts', quick: ['--duration', '5', '--rounds', '1', '--warmup', '2'] },
  { name: 'scheduling', file: 'scheduling.bench.ts', quick: ['--pending', '5000', '--rate', '100', '--window', '10'] },
  { name: 'schedules', file: 'schedules.bench.ts', quick: ['--projects', '50', '--fast', '50', '--every', '1', '--window', '10', '--baseline-publishes', '20'] },
  { name: 'callbacks', file: 'callbacks.bench.ts', quick: ['--count', '2000'] },
  { name: 'polling', file: 'polling.bench.ts', quick: ['--triggers', '1000', '--seconds', '20', '--baseline-seconds', '8'] },
  { name: 'rate-limits', file: 'rate-limits.bench.ts', quick: ['--duration', '5', '--rounds', '2', '--warmup', '2'] },
  { name: 'dashboard', file: 'dashboard.bench.ts', quick: ['--runs', '120000', '--orgs', '2', '--projects', '20', '--samples', '100', '--console', 'off'] },
  { name: 'webhooks', file: 'webhooks.bench.ts', quick: ['--duration', '5', '--rounds', '1', '--warmup', '2', '--signed', '10000', '--latency-seconds', '10'] },
  { name: 'sustained', file: 'sustained.bench.ts', quick: ['--quick', '--same-system', '--rates', '200,400'] },
  { name: 'streams', file: 'streams.bench.ts', quick: ['--rate', '10', '--seconds', '10', '--hold', '5', '--idle', '100'] },
  { name: 'fairness', file: 'fairness.bench.ts', quick: ['--a-runs', '2000'] },
  { name: 'prefer-wait', file: 'prefer-wait.bench.ts', quick: ['--rate', '20', '--seconds', '10'] },
];

const USAGE = `Usage: npm run bench:all -- [options]

Runs every benchmark (bench:*) one after the other and prints one table of their headline
figures, each beside its baseline from the same run. Needs a build (npm run build), PostgreSQL
and NATS. The other benchmarks' environment variables pass through.

Options:
${formatUsage([
  ['--quick', 'each benchmark briefly, with small arguments (the figures are a smoke check, not the goals\' size)'],
  ['--only <names>', `only these, comma-separated: ${BENCHMARKS.map(({ name }) => name).join(', ')}`],
  ['--skip <names>', 'all but these'],
  ['--dist <dir>', 'the build every benchmark runs (default dist/ of this repository)'],
])}`;

interface Outcome {
  name: string;
  exitCode: number | null;
  seconds: number;
  figures: Figure[];
  log: string;
  load: string;
}

async function main(): Promise<number> {
  const { values } = parseArgsOrExplain({
    args: process.argv.slice(2),
    options: {
      quick: { type: 'boolean', default: false },
      only: { type: 'string' },
      skip: { type: 'string' },
      dist: { type: 'string', default: path.join(REPO_ROOT, 'dist') },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  const names = (list: string | undefined) => (list === undefined ? undefined : new Set(list.split(',').map((name) => name.trim())));
  const only = names(values.only);
  const skip = names(values.skip) ?? new Set<string>();
  for (const name of [...(only ?? []), ...skip]) {
    if (!BENCHMARKS.some((bench) => bench.name === name)) throw new UsageError(`no benchmark named ${name}`);
  }
  const chosen = BENCHMARKS.filter(({ name, file }) => (only === undefined || only.has(name)) && !skip.has(name) && existsSync(path.join(BENCH_DIR, file)));
  const logDir = mkdtempSync(path.join(os.tmpdir(), 'runline-bench-all-'));
  console.log(`bench:all${values.quick ? ' --quick' : ''}: ${chosen.map(({ name }) => name).join(', ')}; Node ${process.version}, ${os.cpus().length} CPUs; logs in ${logDir}`);

  const outcomes: Outcome[] = [];
  for (const bench of chosen) {
    const args = [...(values.quick ? bench.quick : []), '--dist', path.resolve(values.dist)];
    const load = loadAverage();
    console.log(`\n${bench.name}: npm run bench:${bench.name} -- ${args.join(' ')}   (load average ${load})`);
    const outcome = await runOne(bench.name, bench.file, args, path.join(logDir, `${bench.name}.log`));
    outcomes.push({ ...outcome, load });
    console.log(
      `  exit ${outcome.exitCode ?? 'signal'} after ${outcome.seconds.toFixed(0)} s; ${outcome.figures.length} figure(s)` +
        outcome.figures.map((figure) => `\n  ${figure.figure}: ${show(figure.value)}${figure.baseline === undefined ? '' : ` (baseline ${show(figure.baseline)})`}`).join(''),
    );
  }

  console.log(`\nFigures (${values.quick ? 'quick runs: small sizes, not the goals\' own' : 'full runs'}; each baseline measured in the same run):`);
  const rows = outcomes.flatMap((outcome) => {
    if (outcome.figures.length === 0) {
      const why = outcome.exitCode === 0 ? 'printed no FIGURE line' : `failed (exit ${outcome.exitCode ?? 'signal'}), see ${outcome.log}`;
      return [[outcome.name, why, '', '', '', '', '', outcome.load]];
    }
    return outcome.figures.map((figure) => [
      outcome.name,
      figure.figure,
      show(figure.value),
      figure.baseline === undefined ? '' : show(figure.baseline),
      figure.baseline === undefined || figure.baseline === 0 ? '' : `${(figure.value / figure.baseline).toFixed(2)} x`,
      figure.goal ?? '',
      figure.met === undefined ? '' : figure.met ? 'yes' : 'no',
      outcome.load,
    ]);
  });
  printTable([['benchmark', 'figure', 'value', 'baseline', 'ratio', 'goal', 'met', 'load average at start'], ...rows]);
  const failed = outcomes.filter((outcome) => outcome.exitCode !== 0);
  if (failed.length > 0) console.log(`\n${failed.length} benchmark(s) did not end cleanly: ${failed.map(({ name }) => name).join(', ')} (logs in ${logDir})`);
  return failed.length > 0 ? 1 : 0;
}

/** Runs one benchmark in a child process; its output goes to `log`, and its FIGURE lines are kept. */
function runOne(name: string, file: string, args: string[], log: string): Promise<Omit<Outcome, 'load'>> {
  const started = performance.now();
  const output = createWriteStream(log);
  const child = spawn(process.execPath, ['--import', path.join(BENCH_DIR, 'register.mjs'), path.join(BENCH_DIR, file), ...args], {
    cwd: REPO_ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const figures: Figure[] = [];
  createInterface({ input: child.stdout }).on('line', (line) => {
    output.write(`${line}\n`);
    if (!line.startsWith(FIGURE_PREFIX)) return;
    try {
      figures.push(JSON.parse(line.slice(FIGURE_PREFIX.length)) as Figure);
    } catch {
      output.write(`(bench:all could not read the line above)\n`);
    }
  });
  child.stderr.pipe(output, { end: false });
  // Ctrl-C reaches the child too (same process group): it cleans up, and so do we after it.
  return new Promise((resolve) => {
    child.once('close', (code) => {
      output.end();
      resolve({ name, exitCode: code, seconds: (performance.now() - started) / 1000, figures, log });
    });
  });
}

function show(value: number): string {
  if (!Number.isFinite(value)) return '-';
  return Number.isInteger(value) ? String(value) : value.toFixed(2);
}

function loadAverage(): string {
  return os
    .loadavg()
    .map((value) => value.toFixed(2))
    .join(' ');
}

try {
  process.exitCode = await main();
} catch (error) {
  console.error(error instanceof UsageError ? `${error.message}\n\n${USAGE}` : error);
  process.exitCode = error instanceof UsageError ? 2 : 1;
}
