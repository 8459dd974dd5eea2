import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import type { LoadSettings } from './load.js';

export const BENCH_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const REPO_ROOT = path.resolve(BENCH_DIR, '..');

/** A bad command line: printed with the usage text, exit code 2. */
export class UsageError extends Error {}

export type BusKind = 'in-process' | 'nats';

/** The options every benchmark takes; parseArgs specs, strings parsed by `commonOptions`. */
export const COMMON_OPTION_SPECS = {
  duration: { type: 'string', default: '10' },
  connections: { type: 'string', default: '10' },
  pipelining: { type: 'string', default: '1' },
  rounds: { type: 'string', default: '2' },
  warmup: { type: 'string', default: '5' },
  profile: { type: 'boolean', default: false },
  dist: { type: 'string', default: path.join(REPO_ROOT, 'dist') },
  help: { type: 'boolean', default: false },
} as const;

/** Usage rows (flag, what it does) of the options in COMMON_OPTION_SPECS. */
export const COMMON_USAGE: Array<[string, string]> = [
  ['--duration <s>', 'seconds per measured round and target (default 10)'],
  ['--rounds <n>', 'measured rounds; each measures both targets, order alternating (default 2)'],
  ['--warmup <s>', 'unmeasured seconds per target before the rounds (default 5)'],
  ['--pipelining <n>', 'requests in flight per connection (default 1)'],
  ['--profile', 'run the system under --cpu-prof; keep the .cpuprofile and print its top functions'],
  ['--dist <dir>', 'the build to run (default dist/ of this repository)'],
];

/** Option rows as an aligned block; a description may continue on lines of its own. */
export function formatUsage(rows: Array<[string, string]>): string {
  const width = Math.max(...rows.map(([flag]) => flag.length)) + 2;
  return rows.map(([flag, text]) => `  ${flag.padEnd(width)}${text.replace(/\n/g, `\n  ${' '.repeat(width)}`)}`).join('\n');
}

export interface CommonOptions {
  settings: LoadSettings;
  rounds: number;
  warmup: number;
  profile: boolean;
  dist: string;
}

interface CommonValues {
  duration: string;
  connections: string;
  pipelining: string;
  rounds: string;
  warmup: string;
  profile: boolean;
  dist: string;
}

export function commonOptions(values: CommonValues): CommonOptions {
  return {
    settings: {
      duration: positiveInteger('--duration', values.duration),
      connections: positiveInteger('--connections', values.connections),
      pipelining: positiveInteger('--pipelining', values.pipelining),
    },
    rounds: positiveInteger('--rounds', values.rounds),
    warmup: positiveInteger('--warmup', values.warmup),
    profile: values.profile,
    dist: path.resolve(values.dist),
  };
}

/** parseArgs, with its complaints (unknown flag, missing value) turned into usage errors. */
export function parseArgsOrExplain<T extends ParseArgsConfig>(config: T) {
  try {
    return parseArgs(config);
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

export function positiveInteger(flag: string, text: string): number {
  const value = Number(text);
  if (!Number.isInteger(value) || value < 1) throw new UsageError(`${flag} must be a positive integer, got "${text}"`);
  return value;
}

export function busKind(text: string): BusKind {
  if (text !== 'in-process' && text !== 'nats') throw new UsageError('--bus must be in-process or nats');
  return text;
}
