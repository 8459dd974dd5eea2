import { quotaPeriodOf } from './monthly-quota.js';

const utc = (text: string) => new Date(text);

describe('quotaPeriodOf', () => {
  it('starts on the 1st of the month (UTC) without a renewal day', () => {
    expect(quotaPeriodOf(utc('2026-11-21T14:00:00Z'), null)).toEqual({ start: utc('2026-11-01T00:00:00Z'), end: utc('2026-12-01T00:00:00Z') });
    expect(quotaPeriodOf(utc('2026-11-01T00:00:00Z'), null).start).toEqual(utc('2026-11-01T00:00:00Z'));
    expect(quotaPeriodOf(utc('2026-10-31T23:59:59.999Z'), null).start).toEqual(utc('2026-10-01T00:00:00Z'));
  });

  it('starts on the renewal day: the boundary instant belongs to the new period', () => {
    expect(quotaPeriodOf(utc('2026-11-15T00:00:00Z'), 15)).toEqual({ start: utc('2026-11-15T00:00:00Z'), end: utc('2026-12-15T00:00:00Z') });
    expect(quotaPeriodOf(utc('2026-11-14T23:59:59.999Z'), 15)).toEqual({ start: utc('2026-10-15T00:00:00Z'), end: utc('2026-11-15T00:00:00Z') });
  });

  it('rolls over the year in both directions', () => {
    expect(quotaPeriodOf(utc('2026-01-10T08:00:00Z'), 20)).toEqual({ start: utc('2025-12-20T00:00:00Z'), end: utc('2026-01-20T00:00:00Z') });
    expect(quotaPeriodOf(utc('2026-12-28T08:00:00Z'), 28)).toEqual({ start: utc('2026-12-28T00:00:00Z'), end: utc('2027-01-28T00:00:00Z') });
  });

  it('is computed in UTC whatever the wall clock of the offset says', () => {
    // 2026-03-01 01:30 in +02:00 is still February in UTC.
    expect(quotaPeriodOf(new Date('2026-03-01T01:30:00+02:00'), null).start).toEqual(utc('2026-02-01T00:00:00Z'));
  });

  it('refuses a renewal day a month may not have', () => {
    expect(() => quotaPeriodOf(new Date(), 29)).toThrow('renewal day 29 is not 1-28');
  });
});
