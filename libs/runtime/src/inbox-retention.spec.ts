import { inboxRetentionMs } from './start-service.js';

describe('INBOX_RETENTION_DAYS', () => {
  it('is the pruner default when unset, days when set', () => {
    expect(inboxRetentionMs({})).toBeUndefined();
    expect(inboxRetentionMs({ INBOX_RETENTION_DAYS: '45' })).toBe(45 * 86_400_000);
  });

  it.each(['0', '-1', '2.5', 'x', '3651'])('refuses %s, naming the variable', (value) => {
    expect(() => inboxRetentionMs({ INBOX_RETENTION_DAYS: value })).toThrow(/INBOX_RETENTION_DAYS must be a whole number of days/);
  });
});
