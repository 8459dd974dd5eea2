import { normalizeSchedule, scheduleFingerprint } from '@runline/engine';
import { planPublish, rawSchedulesOf } from './schedule-publish-plan.js';

const publishedAt = new Date('2030-01-01T00:00:00.000Z');
const fingerprintOf = (raw: Record<string, unknown>) => scheduleFingerprint(normalizeSchedule(raw));

describe('planPublish', () => {
  it('a new schedule starts afresh: anchored at the publish, first fire one interval later', () => {
    const plan = planPublish('p-1', [{ id: 'tick', every: '1m' }], [], publishedAt);
    expect(plan.upserts).toEqual([
      expect.objectContaining({ scheduleId: 'tick', position: 0, unchanged: false, anchorAt: publishedAt, nextFireAt: new Date('2030-01-01T00:01:00.000Z') }),
    ]);
    expect(plan.removed).toEqual([]);
    expect(plan.changed).toEqual([]);
  });

  it('an unchanged schedule keeps its times (only position and versions change), even when its payload changed', () => {
    const raw = { id: 'tick', every: '1m', payload: { a: 1 } };
    const plan = planPublish('p-1', [{ ...raw, payload: { a: 2 } }], [{ scheduleId: 'tick', fingerprint: fingerprintOf(raw) }], publishedAt);
    expect(plan.upserts[0]).toMatchObject({ unchanged: true });
    expect(plan.changed).toEqual([]);
  });

  it('a changed schedule starts afresh and its waiting fires go; a removed one goes', () => {
    const plan = planPublish(
      'p-1',
      [{ id: 'tick', every: '2m' }],
      [
        { scheduleId: 'tick', fingerprint: fingerprintOf({ id: 'tick', every: '1m' }) },
        { scheduleId: 'gone', fingerprint: fingerprintOf({ id: 'gone', every: '1m' }) },
      ],
      publishedAt,
    );
    expect(plan.upserts[0]).toMatchObject({ scheduleId: 'tick', unchanged: false, nextFireAt: new Date('2030-01-01T00:02:00.000Z') });
    expect(plan.changed).toEqual(['tick']);
    expect(plan.removed).toEqual(['gone']);
  });

  it('a disabled schedule is kept with no next fire', () => {
    const plan = planPublish('p-1', [{ id: 'off', every: '1m', enabled: false }], [], publishedAt);
    expect(plan.upserts[0]).toMatchObject({ nextFireAt: null, dueAt: null });
  });
});

describe('rawSchedulesOf', () => {
  it('reads workflow.schedules; none for a chatbot or a definition without them', () => {
    expect(rawSchedulesOf({ workflow: { schedules: [{ id: 'a' }] } })).toEqual([{ id: 'a' }]);
    expect(rawSchedulesOf({ bot: {}, flow: {} })).toEqual([]);
    expect(rawSchedulesOf(null)).toEqual([]);
  });
});
