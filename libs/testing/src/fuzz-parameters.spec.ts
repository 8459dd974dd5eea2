import { FIXED_FUZZ_SEED, fuzzParameters } from './fuzz-parameters.js';

describe('fuzzParameters', () => {
  it('without FUZZ_SEED: the fixed seed and the test’s own number of runs, the same on every call', () => {
    expect(fuzzParameters(500, 0, {})).toEqual({ seed: FIXED_FUZZ_SEED, numRuns: 500 });
    expect(fuzzParameters(undefined, 0, {})).toEqual({ seed: FIXED_FUZZ_SEED, numRuns: 100 });
    expect(fuzzParameters(40, 3, {})).toEqual({ seed: FIXED_FUZZ_SEED + 3, numRuns: 40 });
  });

  it('FUZZ_SEED=<integer> replays that seed', () => {
    expect(fuzzParameters(10, 0, { FUZZ_SEED: '-123' }).seed).toBe(-123);
  });

  it('FUZZ_SEED=random: one seed drawn for the whole file, not the fixed one', () => {
    const first = fuzzParameters(10, 0, { FUZZ_SEED: 'random' }).seed;
    expect(fuzzParameters(10, 0, { FUZZ_SEED: 'random' }).seed).toBe(first);
    expect(fuzzParameters(10, 1, { FUZZ_SEED: 'random' }).seed).toBe(first + 1);
    expect(Number.isInteger(first)).toBe(true);
  });

  it('FUZZ_RUNS_SCALE multiplies each test’s runs; FUZZ_RUNS sets every property’s', () => {
    expect(fuzzParameters(300, 0, { FUZZ_RUNS_SCALE: '10' }).numRuns).toBe(3000);
    expect(fuzzParameters(300, 0, { FUZZ_RUNS: '7', FUZZ_RUNS_SCALE: '10' }).numRuns).toBe(7);
  });

  it('refuses values it cannot use rather than fall back to the fixed seed', () => {
    expect(() => fuzzParameters(10, 0, { FUZZ_SEED: 'randm' })).toThrow('FUZZ_SEED must be an integer or "random", got "randm"');
    expect(() => fuzzParameters(10, 0, { FUZZ_RUNS_SCALE: '0' })).toThrow('FUZZ_RUNS_SCALE must be a positive integer, got "0"');
    expect(() => fuzzParameters(10, 0, { FUZZ_RUNS: '2.5' })).toThrow('FUZZ_RUNS must be a positive integer, got "2.5"');
  });
});
