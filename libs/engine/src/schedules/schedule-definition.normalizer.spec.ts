import { jitterMs, normalizeSchedule, parseEvery, scheduleFingerprint, schedulesOf, scheduleJobName } from '@runline/engine';

describe('normalizeSchedule', () => {
  it('applies the defaults', () => {
    expect(normalizeSchedule({ id: 'daily-report', cron: '0 9 * * 1-5' })).toEqual({
      id: 'daily-report',
      cron: '0 9 * * 1-5',
      every: null,
      timezone: 'UTC',
      payload: {},
      overlap: 'SKIP',
      catchUp: 'LATEST',
      catchUpWindowSeconds: 3600,
      jitterSeconds: 0,
      startAt: null,
      endAt: null,
      enabled: true,
    });
  });

  it('answers "UTC" as the time zone of an every schedule, spells zones canonically, UTC dates and single-spaced cron', () => {
    expect(normalizeSchedule({ id: 'poll', every: '15m', timezone: 'Europe/Berlin' })).toMatchObject({ cron: null, every: '15m', timezone: 'UTC' });
    expect(normalizeSchedule({ id: 'a', cron: ' 0  9 * * * ', timezone: 'europe/berlin', startAt: '2030-01-01T10:00:00+01:00' })).toMatchObject({
      cron: '0 9 * * *',
      timezone: 'Europe/Berlin',
      startAt: '2030-01-01T09:00:00.000Z',
      endAt: null,
    });
  });

  it('schedulesOf answers the normalized schedules of a definition, [] for one without', () => {
    expect(schedulesOf({ schemaVersion: 1, workflow: { start: 'n', nodes: {}, schedules: [{ id: 'a', every: '1h' }] } }).map((s) => s.id)).toEqual(['a']);
    expect(schedulesOf({ schemaVersion: 1, bot: { start: 'n', nodes: {} } })).toEqual([]);
  });

  it('parses every: s, m, h, d', () => {
    expect(['30s', '15m', '2h', '1d', '31d'].map(parseEvery)).toEqual([30_000, 900_000, 7_200_000, 86_400_000, 31 * 86_400_000]);
    expect(['', '1', '1w', '-1s', '01m', '1.5h', '1 m'].map(parseEvery)).toEqual(Array(7).fill(undefined));
  });

  it('names the run of a fire schedule:<id>', () => {
    expect(scheduleJobName('daily-report')).toBe('schedule:daily-report');
  });
});

describe('scheduleFingerprint: unchanged schedules keep their times, changed ones start afresh', () => {
  const base = { id: 'daily-report', cron: '0 9 * * 1-5', timezone: 'Europe/Berlin', payload: { a: 1, b: 2 }, jitterSeconds: 5 };
  const fingerprint = (config: object) => scheduleFingerprint(normalizeSchedule(config));

  it('is stable across key order, spelling of defaults and of the same instant', () => {
    const reordered = { jitterSeconds: 5, payload: { b: 2, a: 1 }, timezone: 'Europe/Berlin', cron: '0 9 * * 1-5', id: 'daily-report' };
    expect(fingerprint(reordered)).toBe(fingerprint(base));
    expect(fingerprint({ ...base, enabled: true, startAt: null })).toBe(fingerprint(base));
    expect(fingerprint({ ...base, cron: '0  9 * * 1-5' })).toBe(fingerprint(base));
    expect(fingerprint({ ...base, startAt: '2030-01-01T10:00:00+01:00' })).toBe(fingerprint({ ...base, startAt: '2030-01-01T09:00:00Z' }));
    expect(fingerprint({ id: 'p', every: '60m' })).toBe(fingerprint({ id: 'p', every: '1h' }));
    expect(fingerprint(base)).toMatch(/^[0-9a-f]{32}$/);
  });

  it('changes with what decides fire times: cron, interval, time zone, startAt, endAt, enabled, id', () => {
    const changes = [{ cron: '0 10 * * 1-5' }, { timezone: 'UTC' }, { startAt: '2030-01-01T00:00:00Z' }, { endAt: '2030-01-01T00:00:00Z' }, { enabled: false }, { id: 'other' }];
    for (const change of changes) expect(fingerprint({ ...base, ...change })).not.toBe(fingerprint(base));
    expect(fingerprint({ id: 'p', every: '15m' })).not.toBe(fingerprint({ id: 'p', every: '16m' }));
  });

  it('does not change with payload, policies or jitter, which leave the times as they are', () => {
    for (const change of [{ payload: { a: 2 } }, { overlap: 'ALLOW' }, { catchUp: 'ALL' }, { catchUpWindowSeconds: 60 }, { jitterSeconds: 30 }]) {
      expect(fingerprint({ ...base, ...change })).toBe(fingerprint(base));
    }
  });

  it('an every schedule ignores its time zone', () => {
    expect(fingerprint({ id: 'p', every: '1h', timezone: 'Asia/Tokyo' })).toBe(fingerprint({ id: 'p', every: '1h' }));
  });
});

describe('jitterMs: deterministic per fire, within [0, jitterSeconds × 1000)', () => {
  const nominal = new Date('2026-01-05T08:00:00.000Z');

  it('is the same for the same schedule key and nominal time', () => {
    expect(jitterMs('project-1/daily-report', nominal, 60)).toBe(jitterMs('project-1/daily-report', new Date(nominal.getTime()), 60));
  });

  it('is 0 without jitter', () => {
    expect(jitterMs('project-1/daily-report', nominal, 0)).toBe(0);
  });

  it('stays in range and spreads fires over the whole range', () => {
    const values = Array.from({ length: 2000 }, (_, minute) => jitterMs('project-1/every-minute', new Date(nominal.getTime() + minute * 60_000), 10));
    for (const value of values) {
      expect(Number.isInteger(value)).toBe(true);
      expect(value).toBeGreaterThanOrEqual(0);
      expect(value).toBeLessThan(10_000);
    }
    // Each tenth of the range gets a fair share (200 expected of 2000).
    const tenths = Array.from({ length: 10 }, (_, tenth) => values.filter((value) => Math.floor(value / 1000) === tenth).length);
    for (const count of tenths) expect(count).toBeGreaterThan(130);
  });

  it('differs between schedules due at the same time', () => {
    const keys = Array.from({ length: 50 }, (_, index) => `project-${index}/daily-report`);
    expect(new Set(keys.map((key) => jitterMs(key, nominal, 3600))).size).toBeGreaterThan(45);
  });
});
