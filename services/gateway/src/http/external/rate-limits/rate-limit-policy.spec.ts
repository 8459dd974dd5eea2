import { DEFAULT_RATE_LIMIT, effectivePolicy, rateLimitHeaders } from './rate-limit-policy.js';

describe('effectivePolicy', () => {
  const none = { limit: null, windowMs: null };

  it('takes the project setting first, then the plan, then the platform default, field by field', () => {
    expect(effectivePolicy(none, none)).toEqual(DEFAULT_RATE_LIMIT);
    expect(DEFAULT_RATE_LIMIT).toEqual({ limit: 120, windowMs: 60_000 });
    expect(effectivePolicy(none, { limit: 10, windowMs: 5000 })).toEqual({ limit: 10, windowMs: 5000 });
    expect(effectivePolicy({ limit: 3, windowMs: null }, { limit: 10, windowMs: 5000 })).toEqual({ limit: 3, windowMs: 5000 });
    expect(effectivePolicy({ limit: 3, windowMs: 2000 }, { limit: 10, windowMs: 5000 })).toEqual({ limit: 3, windowMs: 2000 });
    expect(effectivePolicy({ limit: null, windowMs: 2000 }, none)).toEqual({ limit: 120, windowMs: 2000 });
  });
});

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
