import { jest } from '@jest/globals';
import { backoffMs, retry, type RetryClock } from './retry.js';

/** A clock that moves only when the code under test sleeps. */
function fakeClock(): RetryClock & { waits: number[] } {
  let now = 1_000_000;
  const waits: number[] = [];
  return { waits, now: () => now, sleep: async (ms) => void (waits.push(ms), (now += ms)) };
}

/** Work that fails with `errors` one after another, then answers 'done'. */
function failing(...errors: Error[]) {
  const work = async (attempt: number) => {
    work.attempts.push(attempt);
    const error = errors.shift();
    if (error) throw error;
    return 'done';
  };
  work.attempts = [] as number[];
  return work;
}

class Busy extends Error {
  constructor(readonly retryAfterMs: number | null = null) {
    super('busy');
  }
}

describe('retry', () => {
  it('tries again after an exponential backoff until the work succeeds, numbering the tries', async () => {
    const clock = fakeClock();
    const work = failing(new Busy(), new Busy(), new Busy());
    await expect(retry(work, { baseDelayMs: 100, clock })).resolves.toBe('done');
    expect(work.attempts).toEqual([1, 2, 3, 4]);
    expect(clock.waits).toEqual([100, 200, 400]);
  });

  it('grows by `factor` and stops growing at `maxDelayMs`', async () => {
    const clock = fakeClock();
    await retry(failing(new Busy(), new Busy(), new Busy(), new Busy()), { baseDelayMs: 100, factor: 3, maxDelayMs: 1000, clock });
    expect(clock.waits).toEqual([100, 300, 900, 1000]);
    const steady = fakeClock();
    await retry(failing(new Busy(), new Busy()), { baseDelayMs: 100, factor: 1, clock: steady });
    expect(steady.waits).toEqual([100, 100]);
  });

  it('adds up to `jitter` of each backoff at random', () => {
    const random = jest.spyOn(Math, 'random');
    try {
      random.mockReturnValue(0);
      expect(backoffMs({ baseDelayMs: 100, jitter: 0.2 }, 2)).toBe(200);
      random.mockReturnValue(0.999);
      expect(backoffMs({ baseDelayMs: 100, jitter: 0.2 }, 2)).toBe(239);
    } finally {
      random.mockRestore();
    }
  });

  it('throws the last error, as it was, once the tries run out', async () => {
    const clock = fakeClock();
    const last = new Busy();
    const work = failing(new Busy(), new Busy(), last, new Busy());
    await expect(retry(work, { maxAttempts: 3, baseDelayMs: 10, clock })).rejects.toBe(last);
    expect(work.attempts).toEqual([1, 2, 3]);
    expect(clock.waits).toEqual([10, 20]);
  });

  it('throws an error that is not retryable at once; a TypeError (a bug) is never retried', async () => {
    const clock = fakeClock();
    const refused = new Error('refused');
    const work = failing(refused);
    await expect(retry(work, { baseDelayMs: 10, retryable: (error) => error instanceof Busy, clock })).rejects.toBe(refused);
    expect(work.attempts).toEqual([1]);

    const bug = new TypeError('x is undefined');
    const buggy = failing(bug);
    await expect(retry(buggy, { baseDelayMs: 10, clock })).rejects.toBe(bug);
    expect(buggy.attempts).toEqual([1]);
  });

  it('waits what the other side asked for instead of the backoff, when it asked', async () => {
    const clock = fakeClock();
    const work = failing(new Busy(5000), new Busy(), new Busy(0));
    await retry(work, { baseDelayMs: 100, requestedDelayMs: (error) => (error instanceof Busy ? error.retryAfterMs : null), clock });
    expect(clock.waits).toEqual([5000, 200]);
    expect(work.attempts).toEqual([1, 2, 3, 4]);
  });

  it('starts no wait that would end past the deadline: the last error stands', async () => {
    const clock = fakeClock();
    const late = new Busy();
    const work = failing(new Busy(), new Busy(), late, new Busy());
    await expect(retry(work, { baseDelayMs: 100, deadline: clock.now() + 350, clock })).rejects.toBe(late);
    expect(clock.waits).toEqual([100, 200]);
  });

  it('tells `onRetry` of each retry before its wait', async () => {
    const clock = fakeClock();
    const seen: Array<[string, number, number]> = [];
    await retry(failing(new Busy(), new Busy()), { baseDelayMs: 100, clock, onRetry: (error, attempt, delayMs) => seen.push([error.message, attempt, delayMs]) });
    expect(seen).toEqual([
      ['busy', 1, 100],
      ['busy', 2, 200],
    ]);
  });

  it('ends the wait under way when the signal aborts, with its reason, and tries no more', async () => {
    jest.useFakeTimers();
    try {
      const controller = new AbortController();
      const work = failing(new Busy(), new Busy());
      const done = retry(work, { baseDelayMs: 60_000, signal: controller.signal });
      await jest.advanceTimersByTimeAsync(1000);
      const reason = new Error('shutting down');
      controller.abort(reason);
      await expect(done).rejects.toBe(reason);
      expect(work.attempts).toEqual([1]);
      expect(jest.getTimerCount()).toBe(0);
    } finally {
      jest.useRealTimers();
    }
  });

  it('waits on the real clock by default', async () => {
    const started = Date.now();
    await expect(retry(failing(new Busy(), new Busy()), { baseDelayMs: 5 })).resolves.toBe('done');
    expect(Date.now() - started).toBeGreaterThanOrEqual(14);
  });
});
