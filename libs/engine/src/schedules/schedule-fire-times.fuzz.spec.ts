import fc from 'fast-check';
import { fireTimesBetween, nextFireTime, normalizeSchedule, parseEvery, type ScheduleDefinition } from '@runline/engine';
import { fuzzParameters } from '@runline/testing';

const ZONES = ['UTC', 'Europe/Berlin', 'America/New_York', 'Australia/Lord_Howe', 'Asia/Kathmandu', 'America/Sao_Paulo'];
const CRONS = ['30 2 * * *', '30 1 * * *', '*/15 * * * *', '0 * * * *', '30 2,14 * * *', '0 0 1 * 1', '15 */2 * * 1-5', '*/30 * 2 * * *', '0 45 1 * * *'];
const EVERY = ['1s', '45s', '15m', '2h', '1d', '31d'];
// 2020 to 2035: daylight saving changes of every listed zone fall inside.
const instant = fc.integer({ min: Date.UTC(2020, 0, 1), max: Date.UTC(2035, 0, 1) }).map((ms) => new Date(ms));

const cronSchedule = fc.record({ cron: fc.constantFrom(...CRONS), timezone: fc.constantFrom(...ZONES) }).map((config) => normalizeSchedule({ id: 'fuzz', ...config }));
const everySchedule = fc
  .record({ every: fc.constantFrom(...EVERY), startAt: fc.option(instant, { nil: undefined }) })
  .map(({ every, startAt }) => normalizeSchedule({ id: 'fuzz', every, ...(startAt === undefined ? {} : { startAt: startAt.toISOString() }) }));

/** A day shortly before daylight saving changes: US in March and November, EU and Lord Howe in March/April and October. */
const beforeChange = fc
  .record({ year: fc.integer({ min: 2021, max: 2034 }), monthDay: fc.constantFrom([2, 5], [2, 22], [3, 1], [9, 1], [9, 20], [10, 1]), hours: fc.integer({ min: 0, max: 47 }) })
  .map(({ year, monthDay: [month, day], hours }) => new Date(Date.UTC(year, month!, day!, hours)));

/** The wall clock of `date` in `timeZone`, for comparing with the pattern. */
function wallClock(date: Date, timeZone: string): string {
  return new Intl.DateTimeFormat('sv-SE', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit' }).format(date);
}

describe('fire times, for random schedules, zones and times (fast-check)', () => {
  it('the next fire is strictly later, and the one after it later still', () => {
    fc.assert(
      fc.property(fc.oneof(cronSchedule, everySchedule), instant, instant, (schedule: ScheduleDefinition, after, anchor) => {
        const first = nextFireTime(schedule, after, anchor);
        if (first === null) return;
        expect(first.getTime()).toBeGreaterThan(after.getTime());
        const second = nextFireTime(schedule, first, anchor);
        if (second !== null) expect(second.getTime()).toBeGreaterThan(first.getTime());
      }),
      fuzzParameters(300),
    );
  });

  it('fireTimesBetween is the chain of nextFireTime, and no fire lies between two of them', () => {
    fc.assert(
      fc.property(cronSchedule, instant, (schedule, from) => {
        const to = new Date(from.getTime() + 24 * 3600 * 1000);
        const fires = fireTimesBetween(schedule, from, to, from, 500);
        for (const [index, fire] of fires.entries()) {
          const previous = index === 0 ? new Date(from.getTime() - 1) : fires[index - 1]!;
          expect(nextFireTime(schedule, previous, from)?.toISOString()).toBe(fire.toISOString());
        }
      }),
      fuzzParameters(50),
    );
  });

  it('a daily fixed-time cron fires exactly once on each local day, DST days included', () => {
    fc.assert(
      fc.property(fc.constantFrom('30 2 * * *', '30 1 * * *', '0 45 1 * * *'), fc.constantFrom(...ZONES), beforeChange, (cron, timezone, from) => {
        const schedule = normalizeSchedule({ id: 'fuzz', cron, timezone });
        const fires = fireTimesBetween(schedule, from, new Date(from.getTime() + 10 * 24 * 3600 * 1000), from, 100);
        const days = fires.map((fire) => wallClock(fire, timezone).slice(0, 10));
        expect(new Set(days).size).toBe(days.length);
        expect(fires.length).toBeGreaterThanOrEqual(9);
      }),
      fuzzParameters(100),
    );
  });

  it('an every schedule stays on its grid: from startAt, or from the anchor', () => {
    fc.assert(
      fc.property(everySchedule, instant, instant, (schedule, after, anchor) => {
        const fire = nextFireTime(schedule, after, anchor);
        if (fire === null) return;
        const base = schedule.startAt === null ? anchor.getTime() : Date.parse(schedule.startAt);
        expect(Math.abs((fire.getTime() - base) % parseEvery(schedule.every!)!)).toBe(0);
        expect(fire.getTime()).toBeGreaterThan(after.getTime());
        if (schedule.startAt !== null) expect(fire.getTime()).toBeGreaterThanOrEqual(base);
      }),
      fuzzParameters(300),
    );
  });
});
