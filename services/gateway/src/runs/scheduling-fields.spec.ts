import { MAX_DELAY_SECONDS, parseIsoDateTimeWithOffset, schedulingFieldsOf } from './scheduling-fields.js';

const NOW = new Date('2030-01-01T10:00:00.000Z');
const BOTH = 'Provide either runAt or delaySeconds, not both';
const INVALID_RUN_AT = 'runAt must be a valid ISO date-time';
const PAST = 'runAt must be in the future';
const INVALID_DELAY = 'delaySeconds must be a positive number';
const TOO_FAR = 'runAt must be at most 365 days in the future';
const TOO_LONG = 'delaySeconds must be at most 31536000 (365 days)';

describe('schedulingFieldsOf', () => {
  it('returns nothing when neither field is sent (an immediate run)', () => {
    expect(schedulingFieldsOf({}, NOW)).toBeUndefined();
    expect(schedulingFieldsOf({ event: 'x', payload: { runAt: 'nested, not ours' } }, NOW)).toBeUndefined();
  });

  describe('runAt', () => {
    it.each([
      ['Z', '2030-01-01T10:00:05Z', '2030-01-01T10:00:05.000Z'],
      ['milliseconds', '2030-01-01T10:00:05.123Z', '2030-01-01T10:00:05.123Z'],
      ['a fraction beyond milliseconds (cut, not rounded)', '2030-01-01T10:00:05.123999Z', '2030-01-01T10:00:05.123Z'],
      ['a positive offset', '2030-01-01T12:30:00+02:00', '2030-01-01T10:30:00.000Z'],
      ['a negative offset', '2030-01-01T05:30:00-05:00', '2030-01-01T10:30:00.000Z'],
      ['an offset without colon', '2030-01-01T11:00:02+0100', '2030-01-01T10:00:02.000Z'],
      ['an offset of hours only', '2030-01-01T11:00:01+01', '2030-01-01T10:00:01.000Z'],
      ['no seconds', '2030-01-01T10:01Z', '2030-01-01T10:01:00.000Z'],
      ['lower-case t and z (RFC 3339)', '2030-01-01t10:00:05z', '2030-01-01T10:00:05.000Z'],
    ])('accepts %s', (_name, runAt, expected) => {
      expect(schedulingFieldsOf({ runAt }, NOW)).toEqual({ runAt: new Date(expected) });
    });

    it('accepts 29 February of a leap year', () => {
      const now = new Date('2032-01-01T00:00:00Z');
      expect(schedulingFieldsOf({ runAt: '2032-02-29T00:00:00Z' }, now)).toEqual({ runAt: new Date('2032-02-29T00:00:00.000Z') });
    });

    it.each([
      ['without Z or offset', '2030-01-01T10:00:00'],
      ['a date only', '2030-01-01'],
      ['a space instead of T', '2030-01-01 10:00:00Z'],
      ['not a date', 'tomorrow'],
      ['empty', ''],
      ['30 February', '2030-02-30T10:00:00Z'],
      ['29 February of a common year', '2031-02-29T10:00:00Z'],
      ['month 13', '2030-13-01T10:00:00Z'],
      ['hour 24', '2030-01-01T24:00:00Z'],
      ['second 60', '2030-01-01T10:00:60Z'],
      ['offset hour 24', '2030-01-01T10:00:00+24:00'],
      ['trailing text', '2030-01-01T10:00:00Zjunk'],
    ])('refuses %s: runAt must be a valid ISO date-time', (_name, runAt) => {
      expect(schedulingFieldsOf({ runAt }, NOW)).toEqual({ error: INVALID_RUN_AT });
    });

    it.each([
      ['a number', 1893492000000],
      ['null', null],
      ['an object', { at: '2030-01-02T00:00:00Z' }],
      ['true', true],
    ])('refuses %s: runAt must be a valid ISO date-time', (_name, runAt) => {
      expect(schedulingFieldsOf({ runAt }, NOW)).toEqual({ error: INVALID_RUN_AT });
    });

    it('refuses now and the past: runAt must be in the future', () => {
      expect(schedulingFieldsOf({ runAt: '2030-01-01T10:00:00Z' }, NOW)).toEqual({ error: PAST });
      expect(schedulingFieldsOf({ runAt: '2030-01-01T10:00:00.000+00:00' }, NOW)).toEqual({ error: PAST });
      expect(schedulingFieldsOf({ runAt: '2029-12-31T10:00:00Z' }, NOW)).toEqual({ error: PAST });
      // Later on the clock face, earlier in time.
      expect(schedulingFieldsOf({ runAt: '2030-01-01T11:00:00+02:00' }, NOW)).toEqual({ error: PAST });
      expect(schedulingFieldsOf({ runAt: '2030-01-01T10:00:00.001Z' }, NOW)).toEqual({ runAt: new Date('2030-01-01T10:00:00.001Z') });
    });

    it('accepts up to 365 days ahead, refuses beyond', () => {
      expect(schedulingFieldsOf({ runAt: '2031-01-01T10:00:00Z' }, NOW)).toEqual({ runAt: new Date('2031-01-01T10:00:00Z') });
      expect(schedulingFieldsOf({ runAt: '2031-01-01T10:00:00.001Z' }, NOW)).toEqual({ error: TOO_FAR });
      expect(schedulingFieldsOf({ runAt: '9999-12-31T23:59:59Z' }, NOW)).toEqual({ error: TOO_FAR });
    });
  });

  describe('delaySeconds', () => {
    it('starts that many seconds after the receive time, to the millisecond', () => {
      expect(schedulingFieldsOf({ delaySeconds: 5 }, NOW)).toEqual({ runAt: new Date('2030-01-01T10:00:05.000Z') });
      expect(schedulingFieldsOf({ delaySeconds: 1.001 }, NOW)).toEqual({ runAt: new Date('2030-01-01T10:00:01.001Z') });
      expect(schedulingFieldsOf({ delaySeconds: 0.0001 }, NOW)).toEqual({ runAt: new Date('2030-01-01T10:00:00.001Z') });
      expect(schedulingFieldsOf({ delaySeconds: MAX_DELAY_SECONDS }, NOW)).toEqual({ runAt: new Date('2031-01-01T10:00:00.000Z') });
    });

    it.each([
      ['zero', 0],
      ['negative zero', -0],
      ['negative', -1],
      ['a numeric string', '5'],
      ['null', null],
      ['true', true],
      ['an array', [5]],
      ['an object', { seconds: 5 }],
    ])('refuses %s: delaySeconds must be a positive number', (_name, delaySeconds) => {
      expect(schedulingFieldsOf({ delaySeconds }, NOW)).toEqual({ error: INVALID_DELAY });
    });

    it('refuses more than 365 days', () => {
      expect(schedulingFieldsOf({ delaySeconds: MAX_DELAY_SECONDS + 0.001 }, NOW)).toEqual({ error: TOO_LONG });
      expect(schedulingFieldsOf({ delaySeconds: 1e300 }, NOW)).toEqual({ error: TOO_LONG });
    });
  });

  describe('both', () => {
    it.each([
      ['both valid', { runAt: '2030-01-02T00:00:00Z', delaySeconds: 5 }],
      ['both invalid: this check comes first', { runAt: 'garbage', delaySeconds: '5' }],
      ['one of them null', { runAt: '2030-01-02T00:00:00Z', delaySeconds: null }],
    ])('%s → Provide either runAt or delaySeconds, not both', (_name, body) => {
      expect(schedulingFieldsOf(body, NOW)).toEqual({ error: BOTH });
    });
  });
});

describe('parseIsoDateTimeWithOffset', () => {
  it('keeps years before 100 as written', () => {
    expect(parseIsoDateTimeWithOffset('0050-06-01T00:00:00Z')?.getUTCFullYear()).toBe(50);
  });
});
