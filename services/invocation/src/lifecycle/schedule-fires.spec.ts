import { create, StartInvocationRequestSchema, timestampFromDate } from '@runline/contracts';
import type { InvocationDocument } from './invocation.projector.js';
import { scheduleFireFields, scheduleFireOf, withScheduleTrace } from './schedule-fires.js';

const scheduledTime = '2030-01-01T09:00:00.000Z';

describe('schedule fires', () => {
  it('reads the fire from a StartInvocation request; none for other requests', () => {
    const request = create(StartInvocationRequestSchema, { scheduleFire: { scheduleId: 'daily', scheduledTime: timestampFromDate(new Date(scheduledTime)) } });
    expect(scheduleFireOf(request)).toEqual({ id: 'daily', scheduledTime });
    expect(scheduleFireOf(create(StartInvocationRequestSchema, {}))).toBeNull();
  });

  it('a fire’s run shows the nominal time as scheduledFor and schedule:<id> as its job name', () => {
    const request = { schedule: { id: 'daily', scheduledTime } } as Parameters<typeof scheduleFireFields>[0];
    expect(scheduleFireFields(request)).toEqual({ scheduledFor: scheduledTime, schedulerJobName: 'schedule:daily' });
    expect(scheduleFireFields({} as Parameters<typeof scheduleFireFields>[0])).toEqual({ scheduledFor: null, schedulerJobName: null });
  });

  describe('withScheduleTrace', () => {
    const document = (fields: Partial<InvocationDocument>) => ({ triggerSource: 'SCHEDULE', schedulerJobName: 'schedule:daily', scheduledFor: scheduledTime, trace: null, ...fields }) as InvocationDocument;

    it('adds trace.schedule to whatever trace the run has', () => {
      expect(withScheduleTrace(document({})).trace).toEqual({ schedule: { id: 'daily', scheduledTime } });
      expect(withScheduleTrace(document({ trace: { runtime: 'x', steps: 2 } })).trace).toEqual({ runtime: 'x', steps: 2, schedule: { id: 'daily', scheduledTime } });
    });

    it('leaves other runs alone, scheduled runs (runAt) included', () => {
      const runAt = document({ schedulerJobName: 'start:42', trace: { runtime: 'x' } });
      expect(withScheduleTrace(runAt)).toBe(runAt);
      const webhook = document({ triggerSource: 'WEBHOOK', schedulerJobName: null, scheduledFor: null });
      expect(withScheduleTrace(webhook)).toBe(webhook);
    });
  });
});
