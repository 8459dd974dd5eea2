import { jest } from '@jest/globals';
import { retryTransient } from './transient-retry.js';

const cut = Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' });

describe('retryTransient', () => {
  it('retries a transient failure until it succeeds, and rethrows anything else at once', async () => {
    let calls = 0;
    await expect(retryTransient(async () => (++calls < 3 ? Promise.reject(cut) : 'done'), { baseDelayMs: 1 })).resolves.toBe('done');
    expect(calls).toBe(3);

    let other = 0;
    const bug = new TypeError('bug');
    await expect(retryTransient(async () => { other++; throw bug; }, { baseDelayMs: 1 })).rejects.toBe(bug);
    expect(other).toBe(1);
  });

  it('gives up after maxElapsedMs with the last error', async () => {
    await expect(retryTransient(() => Promise.reject(cut), { baseDelayMs: 5, maxElapsedMs: 30 })).rejects.toBe(cut);
  });

  it('waits 50 ms, then twice as long each time up to 2 s, and says so before each wait', async () => {
    jest.useFakeTimers();
    try {
      const retries: number[] = [];
      let calls = 0;
      const done = retryTransient(async () => (++calls <= 8 ? Promise.reject(cut) : 'done'), { onRetry: (_error, attempt) => retries.push(attempt) });
      const waits = [50, 100, 200, 400, 800, 1600, 2000, 2000];
      for (const [index, wait] of waits.entries()) {
        await jest.advanceTimersByTimeAsync(wait - 1);
        expect(calls).toBe(index + 1);
        await jest.advanceTimersByTimeAsync(1);
      }
      await expect(done).resolves.toBe('done');
      expect(retries).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    } finally {
      jest.useRealTimers();
    }
  });
});
