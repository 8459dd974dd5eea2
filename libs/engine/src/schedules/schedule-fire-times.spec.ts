import {
  catchUpFires,
  fireTimesBetween,
  nextFireTime,
  nextFireTimes,
  normalizeSchedule,
  SCHEDULE_LIMITS,
  type ScheduleConfig,
  type ScheduleDefinition,
} from '@runline/engine';

const at = (iso: string) => new Date(iso);
const iso = (dates: readonly Date[]) => dates.map((date) => date.toISOString());
const schedule = (config: Omit<ScheduleConfig, 'id'>): ScheduleDefinition => normalizeSchedule({ id: 'report', ...config });
/** When the schedule came into force (its publish); cron schedules do not depend on it. */
const PUBLISHED = at('2026-01-01T00:00:00.000Z');
/** The next `count` fires after `after`, in UTC. */
const next = (config: Omit<ScheduleConfig, 'id'>, after: string, count: number, anchor = PUBLISHED) =>
  iso(nextFireTimes(schedule(config), at(after), anchor, count));

describe('cron fire times in a time zone (a fake clock: every time is an argument)', () => {
  it('fires at wall-clock times of the zone: 09:00 Monday to Friday in Berlin is 08:00 UTC in winter, 07:00 in summer', () => {
    expect(next({ cron: '0 9 * * 1-5', timezone: 'Europe/Berlin' }, '2026-01-02T00:00:00Z', 3)).toEqual([
      '2026-01-02T08:00:00.000Z', // Friday
      '2026-01-05T08:00:00.000Z', // Monday
      '2026-01-06T08:00:00.000Z',
    ]);
    expect(next({ cron: '0 9 * * 1-5', timezone: 'Europe/Berlin' }, '2026-07-01T00:00:00Z', 1)).toEqual(['2026-07-01T07:00:00.000Z']);
  });

  it('answers the first fire strictly after the given time', () => {
    const daily = schedule({ cron: '0 9 * * *' });
    expect(nextFireTime(daily, at('2026-01-01T09:00:00.000Z'), PUBLISHED)?.toISOString()).toBe('2026-01-02T09:00:00.000Z');
    expect(nextFireTime(daily, at('2026-01-01T08:59:59.999Z'), PUBLISHED)?.toISOString()).toBe('2026-01-01T09:00:00.000Z');
  });

  it('reads 6 fields with seconds first', () => {
    expect(next({ cron: '*/20 * * * * *' }, '2026-01-01T00:00:00Z', 4)).toEqual([
      '2026-01-01T00:00:20.000Z',
      '2026-01-01T00:00:40.000Z',
      '2026-01-01T00:01:00.000Z',
      '2026-01-01T00:01:20.000Z',
    ]);
    expect(next({ cron: '30 0 9 * * 1-5', timezone: 'Europe/Berlin' }, '2026-01-05T00:00:00Z', 1)).toEqual(['2026-01-05T08:00:30.000Z']);
  });

  it('matches day-of-month OR day-of-week when both are restricted, as cron does', () => {
    // 1 January 2026 is a Thursday; the Mondays follow.
    expect(next({ cron: '0 0 1 * 1' }, '2025-12-31T12:00:00Z', 3)).toEqual(['2026-01-01T00:00:00.000Z', '2026-01-05T00:00:00.000Z', '2026-01-12T00:00:00.000Z']);
  });

  describe('spring forward: a time the clock skips fires once, at the first instant after the gap', () => {
    it('Europe/Berlin, 29 March 2026 (02:00 CET → 03:00 CEST): 02:30 fires at 03:00', () => {
      expect(next({ cron: '30 2 * * *', timezone: 'Europe/Berlin' }, '2026-03-28T00:00:00Z', 3)).toEqual([
        '2026-03-28T01:30:00.000Z', // 02:30 CET
        '2026-03-29T01:00:00.000Z', // 03:00 CEST, the first instant after the gap
        '2026-03-30T00:30:00.000Z', // 02:30 CEST
      ]);
    });

    it('America/New_York, 8 March 2026 (02:00 EST → 03:00 EDT): 02:30 fires at 03:00', () => {
      expect(next({ cron: '30 2 * * *', timezone: 'America/New_York' }, '2026-03-07T00:00:00Z', 3)).toEqual([
        '2026-03-07T07:30:00.000Z', // 02:30 EST
        '2026-03-08T07:00:00.000Z', // 03:00 EDT
        '2026-03-09T06:30:00.000Z', // 02:30 EDT
      ]);
    });

    it('lists and steps follow the same rule (croner alone skips them): 02:30 of "30 2,14 * * *" fires at 03:00', () => {
      expect(next({ cron: '30 2,14 * * *', timezone: 'Europe/Berlin' }, '2026-03-28T12:00:00Z', 3)).toEqual([
        '2026-03-28T13:30:00.000Z',
        '2026-03-29T01:00:00.000Z',
        '2026-03-29T12:30:00.000Z',
      ]);
    });

    it('every skipped time of a step lands on the same instant, which fires once', () => {
      expect(next({ cron: '*/15 * * * *', timezone: 'Europe/Berlin' }, '2026-03-29T00:40:00Z', 3)).toEqual([
        '2026-03-29T00:45:00.000Z', // 01:45 CET
        '2026-03-29T01:00:00.000Z', // 02:00, 02:15, 02:30, 02:45 and 03:00 CEST: once
        '2026-03-29T01:15:00.000Z', // 03:15 CEST
      ]);
    });
  });

  describe('fall back: a time the clock shows twice fires once, at its first occurrence', () => {
    it('Europe/Berlin, 25 October 2026 (03:00 CEST → 02:00 CET): 02:30 fires at 02:30 CEST only', () => {
      expect(next({ cron: '30 2 * * *', timezone: 'Europe/Berlin' }, '2026-10-24T00:00:00Z', 3)).toEqual([
        '2026-10-24T00:30:00.000Z', // 02:30 CEST
        '2026-10-25T00:30:00.000Z', // 02:30 CEST, first occurrence; not 01:30Z (02:30 CET)
        '2026-10-26T01:30:00.000Z', // 02:30 CET
      ]);
    });

    it('America/New_York, 1 November 2026 (02:00 EDT → 01:00 EST): 01:30 fires at 01:30 EDT only', () => {
      expect(next({ cron: '30 1 * * *', timezone: 'America/New_York' }, '2026-10-31T00:00:00Z', 3)).toEqual([
        '2026-10-31T05:30:00.000Z', // 01:30 EDT
        '2026-11-01T05:30:00.000Z', // 01:30 EDT, first occurrence; not 06:30Z (01:30 EST)
        '2026-11-02T06:30:00.000Z', // 01:30 EST
      ]);
    });

    it('steps fire once per wall-clock time too (croner alone fires the repeated hour twice)', () => {
      expect(next({ cron: '*/30 * * * *', timezone: 'Europe/Berlin' }, '2026-10-24T23:45:00Z', 3)).toEqual([
        '2026-10-25T00:00:00.000Z', // 02:00 CEST
        '2026-10-25T00:30:00.000Z', // 02:30 CEST
        '2026-10-25T02:00:00.000Z', // 03:00 CET: 02:00 and 02:30 CET do not fire again
      ]);
      expect(next({ cron: '0 * * * *', timezone: 'America/New_York' }, '2026-11-01T03:30:00Z', 3)).toEqual([
        '2026-11-01T04:00:00.000Z', // 00:00 EDT
        '2026-11-01T05:00:00.000Z', // 01:00 EDT
        '2026-11-01T07:00:00.000Z', // 02:00 EST
      ]);
    });

    it('asked during the repeated hour, it does not go back to the first pass', () => {
      // 01:10Z is 02:10 CET, the second pass; 02:30 already fired at 00:30Z.
      expect(next({ cron: '*/30 * * * *', timezone: 'Europe/Berlin' }, '2026-10-25T01:10:00Z', 1)).toEqual(['2026-10-25T02:00:00.000Z']);
      expect(next({ cron: '30 2 * * *', timezone: 'Europe/Berlin' }, '2026-10-25T01:10:00Z', 1)).toEqual(['2026-10-26T01:30:00.000Z']);
    });
  });

  it('with startAt, fires at its first matching time at or after startAt', () => {
    expect(next({ cron: '0 9 * * *', startAt: '2026-02-10T09:00:00Z' }, '2026-01-01T00:00:00Z', 2)).toEqual(['2026-02-10T09:00:00.000Z', '2026-02-11T09:00:00.000Z']);
    expect(next({ cron: '0 9 * * *', startAt: '2026-02-10T09:00:01Z' }, '2026-01-01T00:00:00Z', 1)).toEqual(['2026-02-11T09:00:00.000Z']);
  });

  it('with endAt, fires up to and including endAt, then never', () => {
    const ending = schedule({ cron: '0 9 * * *', endAt: '2026-01-03T09:00:00Z' });
    expect(iso(nextFireTimes(ending, at('2026-01-01T00:00:00Z'), PUBLISHED, 10))).toEqual(['2026-01-01T09:00:00.000Z', '2026-01-02T09:00:00.000Z', '2026-01-03T09:00:00.000Z']);
    expect(nextFireTime(ending, at('2026-01-03T09:00:00Z'), PUBLISHED)).toBeNull();
  });

  it('a disabled schedule has no fire times', () => {
    const disabled = schedule({ cron: '* * * * *', enabled: false });
    expect(nextFireTime(disabled, at('2026-01-01T00:00:00Z'), PUBLISHED)).toBeNull();
    expect(fireTimesBetween(disabled, at('2026-01-01T00:00:00Z'), at('2026-01-02T00:00:00Z'), PUBLISHED, 10)).toEqual([]);
  });
});

describe('every: elapsed time, from the publish or from startAt', () => {
  it('first fires one interval after the publish, then every interval', () => {
    const anchor = at('2026-03-01T10:07:12.250Z');
    expect(next({ every: '15m' }, anchor.toISOString(), 3, anchor)).toEqual(['2026-03-01T10:22:12.250Z', '2026-03-01T10:37:12.250Z', '2026-03-01T10:52:12.250Z']);
    // Asked later (a restart), it stays on the same grid.
    expect(next({ every: '15m' }, '2026-03-01T11:00:00Z', 1, anchor)).toEqual(['2026-03-01T11:07:12.250Z']);
  });

  it('with startAt, first fires at startAt, whatever the publish time', () => {
    expect(next({ every: '1d', startAt: '2026-05-01T06:00:00+02:00' }, PUBLISHED.toISOString(), 2)).toEqual(['2026-05-01T04:00:00.000Z', '2026-05-02T04:00:00.000Z']);
    // A startAt in the past: the grid from startAt.
    expect(next({ every: '2h', startAt: '2025-12-31T23:30:00Z' }, '2026-01-01T00:00:00Z', 2)).toEqual(['2026-01-01T01:30:00.000Z', '2026-01-01T03:30:00.000Z']);
  });

  it('ignores daylight saving and the time zone: every 1h stays hourly in UTC across the Berlin change', () => {
    const anchor = at('2026-03-29T00:00:00Z');
    expect(next({ every: '1h', timezone: 'Europe/Berlin' }, anchor.toISOString(), 3, anchor)).toEqual(['2026-03-29T01:00:00.000Z', '2026-03-29T02:00:00.000Z', '2026-03-29T03:00:00.000Z']);
    expect(schedule({ every: '1h', timezone: 'Europe/Berlin' }).timezone).toBe('UTC');
  });

  it('stops after endAt', () => {
    const anchor = at('2026-01-01T00:00:00Z');
    expect(next({ every: '30s', endAt: '2026-01-01T00:01:30Z' }, anchor.toISOString(), 10, anchor)).toEqual(['2026-01-01T00:00:30.000Z', '2026-01-01T00:01:00.000Z', '2026-01-01T00:01:30.000Z']);
  });
});

describe('fireTimesBetween (backfill)', () => {
  it('answers the fires in [from, to), oldest first: a fire at `from` counts, one at `to` does not', () => {
    const hourly = schedule({ cron: '0 * * * *' });
    expect(iso(fireTimesBetween(hourly, at('2026-01-01T01:00:00Z'), at('2026-01-01T04:00:00Z'), PUBLISHED, 100))).toEqual([
      '2026-01-01T01:00:00.000Z',
      '2026-01-01T02:00:00.000Z',
      '2026-01-01T03:00:00.000Z',
    ]);
  });

  it('stops at the limit, so a backfill asks for one more than it allows to know it is too many', () => {
    const everyMinute = schedule({ cron: '* * * * *' });
    const from = at('2026-01-01T00:00:00Z');
    const fires = fireTimesBetween(everyMinute, from, at('2026-01-02T00:00:00Z'), PUBLISHED, SCHEDULE_LIMITS.maxBackfillFires + 1);
    expect(fires).toHaveLength(1001);
    expect(fires[0]!.toISOString()).toBe('2026-01-01T00:00:00.000Z');
    expect(fires.at(-1)!.toISOString()).toBe('2026-01-01T16:40:00.000Z');
  });

  it('an every schedule backfills on its grid, before the publish too, but never before startAt', () => {
    const anchor = at('2026-01-10T00:00:00Z');
    expect(iso(fireTimesBetween(schedule({ every: '1d' }), at('2026-01-07T12:00:00Z'), at('2026-01-10T00:00:00Z'), anchor, 10))).toEqual(['2026-01-08T00:00:00.000Z', '2026-01-09T00:00:00.000Z']);
    const started = schedule({ every: '1d', startAt: '2026-01-09T00:00:00Z' });
    expect(iso(fireTimesBetween(started, at('2026-01-07T00:00:00Z'), at('2026-01-11T00:00:00Z'), anchor, 10))).toEqual(['2026-01-09T00:00:00.000Z', '2026-01-10T00:00:00.000Z']);
  });

  it('crosses daylight saving changes with one fire per wall-clock time', () => {
    const fires = fireTimesBetween(schedule({ cron: '30 2 * * *', timezone: 'Europe/Berlin' }), at('2026-03-27T00:00:00Z'), at('2026-03-31T00:00:00Z'), PUBLISHED, 100);
    expect(iso(fires)).toEqual(['2026-03-27T01:30:00.000Z', '2026-03-28T01:30:00.000Z', '2026-03-29T01:00:00.000Z', '2026-03-30T00:30:00.000Z']);
  });
});

describe('catchUpFires: a 5-minute outage of an every-minute schedule (last fire handled at 10:00, back at 10:05:30)', () => {
  const anchor = at('2026-06-01T09:00:00Z');
  const missedFrom = at('2026-06-01T10:00:00Z');
  const now = at('2026-06-01T10:05:30Z');
  const missed = ['10:01', '10:02', '10:03', '10:04', '10:05'].map((time) => `2026-06-01T${time}:00.000Z`);
  const policy = (config: Omit<ScheduleConfig, 'id' | 'every'>) => iso(catchUpFires(schedule({ every: '1m', ...config }), missedFrom, now, anchor));

  it('NONE drops them', () => {
    expect(policy({ catchUp: 'NONE' })).toEqual([]);
  });

  it('LATEST runs the latest once (the default)', () => {
    expect(policy({ catchUp: 'LATEST' })).toEqual(['2026-06-01T10:05:00.000Z']);
    expect(policy({})).toEqual(['2026-06-01T10:05:00.000Z']);
  });

  it('LATEST runs nothing when the latest is older than the window', () => {
    expect(policy({ catchUp: 'LATEST', catchUpWindowSeconds: 20 })).toEqual([]);
  });

  it('ALL runs each one, oldest first', () => {
    expect(policy({ catchUp: 'ALL' })).toEqual(missed);
  });

  it('ALL runs only those inside the window', () => {
    // The window reaches back to 10:03:00.
    expect(policy({ catchUp: 'ALL', catchUpWindowSeconds: 150 })).toEqual(missed.slice(2));
  });

  it('a fire due exactly now counts as missed; the fire at missedFrom was handled', () => {
    const exactly = catchUpFires(schedule({ every: '1m', catchUp: 'ALL' }), missedFrom, at('2026-06-01T10:02:00Z'), anchor);
    expect(iso(exactly)).toEqual(missed.slice(0, 2));
  });

  it('a cron schedule in a time zone catches up the same way', () => {
    const daily = schedule({ cron: '0 9 * * *', timezone: 'Europe/Berlin', catchUp: 'ALL', catchUpWindowSeconds: 7 * 24 * 3600 });
    const fires = catchUpFires(daily, at('2026-03-27T12:00:00Z'), at('2026-03-30T12:00:00Z'), anchor);
    expect(iso(fires)).toEqual(['2026-03-28T08:00:00.000Z', '2026-03-29T07:00:00.000Z', '2026-03-30T07:00:00.000Z']);
  });

  it(`ALL runs at most ${SCHEDULE_LIMITS.maxCatchUpFires} fires, the latest ones, oldest first`, () => {
    const dense = schedule({ every: '1s', catchUp: 'ALL', catchUpWindowSeconds: 7 * 24 * 3600 });
    const fires = catchUpFires(dense, at('2026-06-01T08:00:00Z'), at('2026-06-01T10:00:00Z'), at('2026-06-01T07:00:00Z'));
    expect(fires).toHaveLength(SCHEDULE_LIMITS.maxCatchUpFires);
    expect(fires.at(-1)!.toISOString()).toBe('2026-06-01T10:00:00.000Z');
    expect(fires[0]!.toISOString()).toBe('2026-06-01T09:43:21.000Z');
  });
});
