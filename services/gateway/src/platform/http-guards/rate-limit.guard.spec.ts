import { rateLimitHeaders } from './rate-limit.guard.js';

describe('rateLimitHeaders', () => {
  const policy = { limit: 2, windowMs: 60_000 };

  it('counts down the remaining requests and gives the reset in unix seconds (rounded up)', () => {
    expect(rateLimitHeaders(policy, { count: 1, resetAtMs: 1_800_000_000_500, nowMs: 1_800_000_000_000 })).toEqual({
      'x-ratelimit-limit': '2',
      'x-ratelimit-remaining': '1',
      'x-ratelimit-reset': '1800000001',
    });
    expect(rateLimitHeaders(policy, { count: 2, resetAtMs: 1_800_000_000_000, nowMs: 1_799_999_990_000 })['x-ratelimit-remaining']).toBe('0');
  });

  it('adds Retry-After over the limit: the seconds to the reset, at least 1', () => {
    const over = rateLimitHeaders(policy, { count: 3, resetAtMs: 1_800_000_000_000, nowMs: 1_799_999_987_400 });
    expect(over).toMatchObject({ 'x-ratelimit-remaining': '0', 'retry-after': '13' });
    expect(rateLimitHeaders(policy, { count: 9, resetAtMs: 1_800_000_000_000, nowMs: 1_800_000_000_000 })['retry-after']).toBe('1');
  });
});
