import path from 'node:path';

/**
 * Seed and number of runs of every property (fast-check) test: the one place that decides them.
 *
 * - `FUZZ_SEED` unset (CI, `npm test`): FIXED_FUZZ_SEED. The same cases every run, so a test's
 *   verdict never changes from one run to the next; new cases come from `npm run fuzz`.
 * - `FUZZ_SEED=<integer>`: that seed, to replay a failure. fast-check's report of a failed
 *   property names its seed and path (`{ seed: …, path: "…" }`).
 * - `FUZZ_SEED=random` (`npm run fuzz`): a new seed, drawn once per test file and printed, so
 *   `FUZZ_SEED=<it>` replays the whole file.
 * - `FUZZ_RUNS_SCALE=<n>` (default 1; `npm run fuzz` uses 10): each test's own number of runs
 *   times n. `FUZZ_RUNS=<n>`: n runs for every property, whatever its own number.
 *
 * Pass the result to `fc.assert(…, fuzzParameters(500))` or `fc.sample(…, fuzzParameters(150))`
 * (a replay needs the same FUZZ_RUNS / FUZZ_RUNS_SCALE as the failed run). A test asserting one
 * property many times over (once per sample) passes each its index as `seedOffset`, so the
 * assertions draw different cases; the file is then replayed by its FUZZ_SEED, not by the seed
 * fast-check reports for one of them.
 */
export const FIXED_FUZZ_SEED = 20_528;

export interface FuzzParameters {
  readonly seed: number;
  readonly numRuns: number;
}

let randomSeed: number | undefined;

/** `numRuns`: the test's own number of runs (fast-check's default is 100). */
export function fuzzParameters(numRuns = 100, seedOffset = 0, env: NodeJS.ProcessEnv = process.env): FuzzParameters {
  return { seed: (fuzzSeed(env) + seedOffset) | 0, numRuns: fuzzRuns(numRuns, env) };
}

function fuzzSeed(env: NodeJS.ProcessEnv): number {
  const text = env.FUZZ_SEED?.trim();
  if (text === undefined || text === '') return FIXED_FUZZ_SEED;
  if (text === 'random') {
    if (randomSeed === undefined) {
      randomSeed = Math.floor(Math.random() * 2 ** 31);
      // Under Jest the file is named: files running in parallel print their lines in any order.
      const testPath = (globalThis as { expect?: { getState?: () => { testPath?: string } } }).expect?.getState?.().testPath;
      process.stderr.write(`fuzz: FUZZ_SEED=${randomSeed}${testPath ? ` for ${path.relative(process.cwd(), testPath)}` : ''} (set it to replay this file's cases)\n`);
    }
    return randomSeed;
  }
  const seed = Number(text);
  if (!Number.isSafeInteger(seed)) throw new Error(`FUZZ_SEED must be an integer or "random", got "${text}"`);
  return seed;
}

function fuzzRuns(numRuns: number, env: NodeJS.ProcessEnv): number {
  const fixed = env.FUZZ_RUNS?.trim();
  if (fixed) return positiveInteger('FUZZ_RUNS', fixed);
  const scale = env.FUZZ_RUNS_SCALE?.trim();
  return scale ? numRuns * positiveInteger('FUZZ_RUNS_SCALE', scale) : numRuns;
}

function positiveInteger(name: string, text: string): number {
  const value = Number(text);
  if (!Number.isInteger(value) || value < 1) throw new Error(`${name} must be a positive integer, got "${text}"`);
  return value;
}
