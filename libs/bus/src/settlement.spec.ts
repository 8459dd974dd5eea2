import { redeliveryDelay } from './settlement.js';

describe('redeliveryDelay', () => {
  it('doubles from the base with each delivery, up to 30 s', () => {
    expect([1, 2, 3, 4, 5].map((count) => redeliveryDelay(count))).toEqual([250, 500, 1000, 2000, 4000]);
    expect(redeliveryDelay(9)).toBe(30_000);
    expect(redeliveryDelay(1, 10)).toBe(10);
  });

  it('spreads the ten deliveries a consumer allows over more than a minute, so a database restart does not spend them', () => {
    const waited = Array.from({ length: 9 }, (_, index) => redeliveryDelay(index + 1)).reduce((sum, delay) => sum + delay, 0);
    expect(waited).toBeGreaterThan(60_000);
  });
});
