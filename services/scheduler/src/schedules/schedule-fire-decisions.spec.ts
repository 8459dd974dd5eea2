import { normalizeSchedule } from '@runline/engine';
import { decideFires, dueTimeOf, isFinalStatus, type ClaimedScheduleState } from './schedule-fire-decisions.js';

const T0 = new Date('2030-01-01T00:00:00.000Z');
const at = (seconds: number) => new Date(T0.getTime() + seconds * 1000);
const timing = { missedAfterMs: 5000, bufferRecheckMs: 1000 };

function state(overrides: Partial<ClaimedScheduleState> & { raw?: Record<string, unknown> } = {}): ClaimedScheduleState {
  const { raw, ...rest } = overrides;
  return {
    key: 'p-1/every-10s',
    definition: normalizeSchedule({ id: 'every-10s', every: '10s', ...raw }),
    anchorAt: T0,
    paused: false,
    nextFireAt: at(10),
    bufferedFireAt: null,
    previousRunActive: false,
    ...rest,
  };
}

describe('decideFires', () => {
  describe('given a fire due within the horizon and no run in progress', () => {
    it('starts it at its due time and moves to the next fire one interval on', () => {
      const decision = decideFires(state(), at(9.95), at(10.05), timing);
      expect(decision.start).toEqual([{ scheduledTime: at(10), dueAt: at(10), kind: 'SCHEDULED' }]);
      expect(decision.nextFireAt).toEqual(at(20));
      expect(decision.dueAt).toEqual(at(20));
      expect(decision.skipped).toEqual([]);
    });
  });

  describe('given a fire not yet within the horizon', () => {
    it('starts nothing and keeps the row due at that fire', () => {
      const decision = decideFires(state(), at(5), at(5.1), timing);
      expect(decision.start).toEqual([]);
      expect(decision.nextFireAt).toEqual(at(10));
      expect(decision.dueAt).toEqual(at(10));
    });
  });

  describe('given the previous run is not final', () => {
    it('SKIP records the fire as skipped and starts nothing', () => {
      const decision = decideFires(state({ previousRunActive: true }), at(10), at(10.1), timing);
      expect(decision.start).toEqual([]);
      expect(decision.skipped).toEqual([at(10)]);
      expect(decision.nextFireAt).toEqual(at(20));
    });

    it('BUFFER_ONE keeps one fire waiting, rechecked soon; a second is skipped', () => {
      const first = decideFires(state({ previousRunActive: true, raw: { overlap: 'BUFFER_ONE' } }), at(10), at(10.1), timing);
      expect(first.bufferedFireAt).toEqual(at(10));
      expect(first.dueAt).toEqual(at(11));
      expect(first.skipped).toEqual([]);
      const second = decideFires(state({ previousRunActive: true, bufferedFireAt: at(10), nextFireAt: at(20), raw: { overlap: 'BUFFER_ONE' } }), at(20), at(20.1), timing);
      expect(second.bufferedFireAt).toEqual(at(10));
      expect(second.skipped).toEqual([at(20)]);
    });

    it('ALLOW starts it anyway', () => {
      const decision = decideFires(state({ previousRunActive: true, raw: { overlap: 'ALLOW' } }), at(10), at(10.1), timing);
      expect(decision.start.map((fire) => fire.scheduledTime)).toEqual([at(10)]);
    });
  });

  describe('given a buffered fire and the previous run has ended', () => {
    it('starts the buffered fire at once, and the next fire then overlaps with it', () => {
      const decision = decideFires(state({ bufferedFireAt: at(10), nextFireAt: at(20), raw: { overlap: 'BUFFER_ONE' } }), at(19.95), at(20.05), timing);
      expect(decision.start).toEqual([{ scheduledTime: at(10), dueAt: at(19.95), kind: 'BUFFERED' }]);
      expect(decision.bufferedFireAt).toEqual(at(20));
    });
  });

  describe('given a paused schedule', () => {
    it('drops the due fire and moves on', () => {
      const decision = decideFires(state({ paused: true }), at(10), at(10.1), timing);
      expect(decision.start).toEqual([]);
      expect(decision.dropped).toEqual([at(10)]);
      expect(decision.nextFireAt).toEqual(at(20));
    });
  });

  describe('given fires missed while no scheduler ran (due longer ago than missedAfterMs)', () => {
    it('LATEST runs the latest missed fire once and goes on from now', () => {
      const decision = decideFires(state(), at(65), at(65.1), timing);
      expect(decision.start).toEqual([{ scheduledTime: at(60), dueAt: at(65), kind: 'CATCH_UP' }]);
      expect(decision.nextFireAt).toEqual(at(70));
    });

    it('ALL runs each missed fire in the window, oldest first, overlap notwithstanding', () => {
      const decision = decideFires(state({ previousRunActive: true, raw: { catchUp: 'ALL' } }), at(45), at(45.1), timing);
      expect(decision.start.map((fire) => fire.scheduledTime)).toEqual([at(10), at(20), at(30), at(40)]);
      expect(decision.start.every((fire) => fire.kind === 'CATCH_UP')).toBe(true);
    });

    it('ALL stays within catchUpWindowSeconds', () => {
      const decision = decideFires(state({ raw: { catchUp: 'ALL', catchUpWindowSeconds: 25 } }), at(45), at(45.1), timing);
      expect(decision.start.map((fire) => fire.scheduledTime)).toEqual([at(20), at(30), at(40)]);
    });

    it('NONE drops them', () => {
      const decision = decideFires(state({ raw: { catchUp: 'NONE' } }), at(45), at(45.1), timing);
      expect(decision.start).toEqual([]);
      expect(decision.nextFireAt).toEqual(at(50));
    });

    it('a fire late by less than missedAfterMs is a plain fire, not a catch-up', () => {
      const decision = decideFires(state(), at(13), at(13.1), timing);
      expect(decision.start).toEqual([{ scheduledTime: at(10), dueAt: at(10), kind: 'SCHEDULED' }]);
    });
  });

  describe('given jitter', () => {
    it('starts the fire at its nominal time plus a jitter that is the same on every call', () => {
      const jittered = state({ raw: { jitterSeconds: 5 } });
      const due = dueTimeOf(jittered.key, at(10), jittered.definition);
      expect(due.getTime()).toBeGreaterThanOrEqual(at(10).getTime());
      expect(due.getTime()).toBeLessThan(at(15).getTime());
      expect(dueTimeOf(jittered.key, at(10), jittered.definition)).toEqual(due);
      const decision = decideFires(jittered, due, due, timing);
      expect(decision.start).toEqual([{ scheduledTime: at(10), dueAt: due, kind: 'SCHEDULED' }]);
    });
  });

  it('a disabled schedule has no next fire and is never due again', () => {
    const decision = decideFires(state({ raw: { enabled: false } }), at(10), at(10.1), timing);
    expect(decision.nextFireAt).toBeNull();
    expect(decision.dueAt).toBeNull();
  });
});

describe('isFinalStatus', () => {
  it.each([
    [null, true],
    ['SUCCEEDED', true],
    ['FAILED', true],
    ['TIMEOUT', true],
    ['CANCELLED', true],
    ['QUEUED', false],
    ['RUNNING', false],
    ['SUSPENDED', false],
  ])('%s → %s', (status, final) => expect(isFinalStatus(status)).toBe(final));
});
