import type { RetryClock } from '@runline/runtime';
import { ProviderError } from './provider-adapter.js';
import { retryAfterMs } from './provider-http.js';
import { withProviderRetries } from './provider-retries.js';

/** A clock that moves only when the code under test sleeps. */
function fakeClock(): RetryClock & { waits: number[] } {
  let now = 1_000_000;
  const waits: number[] = [];
  return { waits, now: () => now, sleep: async (ms) => void (waits.push(ms), (now += ms)) };
}

const policy = (clock: RetryClock, overrides: Partial<{ maxAttempts: number; deadline: number }> = {}) => ({
  maxAttempts: 3,
  baseBackoffMs: 100,
  attemptTimeoutMs: 5000,
  deadline: clock.now() + 60_000,
  ...overrides,
});

describe('withProviderRetries', () => {
  it('retries 429/5xx-like errors with doubling backoff (up to 20 % jitter) until one succeeds', async () => {
    const clock = fakeClock();
    let calls = 0;
    const result = await withProviderRetries(async () => {
      calls += 1;
      if (calls < 3) throw new ProviderError('busy', true, 503);
      return 'made';
    }, policy(clock), clock);
    expect([result, calls]).toEqual(['made', 3]);
    expect(clock.waits[0]).toBeGreaterThanOrEqual(100);
    expect(clock.waits[0]).toBeLessThanOrEqual(120);
    expect(clock.waits[1]).toBeGreaterThanOrEqual(200);
    expect(clock.waits[1]).toBeLessThanOrEqual(240);
  });

  it('waits the provider’s Retry-After instead when it sent one', async () => {
    const clock = fakeClock();
    let calls = 0;
    await withProviderRetries(async () => {
      calls += 1;
      if (calls === 1) throw new ProviderError('slow down', true, 429, 2000);
      return 'made';
    }, policy(clock), clock);
    expect(clock.waits).toEqual([2000]);
  });

  it('stops at the provider’s “no”, after the last try, or when a wait would pass the deadline, with the provider’s message', async () => {
    const clock = fakeClock();
    let calls = 0;
    const no = withProviderRetries(async () => {
      calls += 1;
      throw new ProviderError('Invalid API Key provided: sk_test_****abcd', false, 401);
    }, policy(clock), clock);
    await expect(no).rejects.toThrow('Invalid API Key provided: sk_test_****abcd');
    expect(calls).toBe(1);

    calls = 0;
    await expect(withProviderRetries(async () => {
      calls += 1;
      throw new ProviderError('An unknown error occurred', true, 500);
    }, policy(clock), clock)).rejects.toThrow('An unknown error occurred');
    expect(calls).toBe(3);

    calls = 0;
    await expect(withProviderRetries(async () => {
      calls += 1;
      throw new ProviderError('Too many requests', true, 429, 120_000);
    }, policy(clock, { deadline: clock.now() + 30_000 }), clock)).rejects.toThrow('Too many requests');
    expect(calls).toBe(1);
  });

  it('gives each try at most what is left of the budget', async () => {
    const clock = fakeClock();
    const limits: number[] = [];
    await withProviderRetries(async (timeoutMs) => void limits.push(timeoutMs), policy(clock, { deadline: clock.now() + 1500 }), clock);
    expect(limits).toEqual([1500]);
  });
});

describe('retryAfterMs', () => {
  it('reads delay-seconds and HTTP dates, and nothing else', () => {
    const now = new Date('2030-01-01T00:00:00Z');
    expect(retryAfterMs({ 'retry-after': '3' }, now)).toBe(3000);
    expect(retryAfterMs({ 'retry-after': 'Tue, 01 Jan 2030 00:00:05 GMT' }, now)).toBe(5000);
    expect(retryAfterMs({ 'retry-after': 'Mon, 31 Dec 2029 00:00:00 GMT' }, now)).toBe(0);
    for (const value of ['', '-1', 'soon', '1.5']) expect(retryAfterMs({ 'retry-after': value }, now)).toBeNull();
    expect(retryAfterMs({}, now)).toBeNull();
  });
});
