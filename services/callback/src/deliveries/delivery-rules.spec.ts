import { ACK_WINDOW_MS, afterAttempt, MAX_ATTEMPTS, waitAfter } from './delivery-rules.js';

describe('callback delivery rules', () => {
  it('are 3 attempts with waits of 0.5 s then 1 s, and 10 s to acknowledge', () => {
    expect(MAX_ATTEMPTS).toBe(3);
    expect([1, 2, 3].map(waitAfter)).toEqual([500, 1000, null]);
    expect(ACK_WINDOW_MS).toBe(10_000);
  });

  it('an acknowledged attempt delivers, whichever it was', () => {
    for (const attempt of [1, 2, 3]) expect(afterAttempt(attempt, true, 1_000)).toEqual({ status: 'DELIVERED', nextAttemptAt: null });
  });

  it('a failed attempt waits from its end, and the last one fails the delivery', () => {
    expect(afterAttempt(1, false, 1_000)).toEqual({ status: 'PENDING', nextAttemptAt: new Date(1_500) });
    expect(afterAttempt(2, false, 1_000)).toEqual({ status: 'PENDING', nextAttemptAt: new Date(2_000) });
    expect(afterAttempt(3, false, 1_000)).toEqual({ status: 'FAILED', nextAttemptAt: null });
  });
});
