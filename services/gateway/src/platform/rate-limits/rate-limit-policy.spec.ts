import { DEFAULT_RATE_LIMIT, effectivePolicy } from './rate-limit-policy.js';

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
