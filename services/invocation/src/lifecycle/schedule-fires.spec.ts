import { create, decodeEnvelope, EVENT_TYPES, SCHEDULER_COMMAND_SUBJECTS, StartInvocationRequestSchema, timestampDate, timestampFromDate, unpackPayloadAs } from '@runline/contracts';
import type { InvocationEvent, InvocationEventData } from './invocation-event.js';
import type { InvocationDocument } from './invocation.projector.js';
import { fireRunEndedMessage, scheduleFireFields, scheduleFireOf, withScheduleTrace } from './schedule-fires.js';

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

  describe('fireRunEndedMessage', () => {
    const owner = { orgId: 'org-1', projectId: 'project-1' };
    const endedAt = '2030-01-01T09:00:03.000Z';
    const fireRun = (fields: Partial<InvocationDocument>) =>
      ({ invocationId: 'run-1', status: 'SUCCEEDED', triggerSource: 'SCHEDULE', schedulerJobName: 'schedule:daily', scheduledFor: scheduledTime, completedAt: endedAt, ...fields }) as InvocationDocument;
    const stored = (type: InvocationEventData['type']) => [{ id: 'e1', invocationId: 'run-1', orgId: 'org-1', projectId: 'project-1', sequence: 3, occurredAt: endedAt, data: { type } } as InvocationEvent];

    it('tells the scheduler which fire’s run ended, with what status and when', () => {
      const message = fireRunEndedMessage(fireRun({ status: 'FAILED' }), stored('InvocationFailed'), owner);
      expect(message?.subject).toBe(SCHEDULER_COMMAND_SUBJECTS.FIRE_RUN_ENDED);
      const envelope = decodeEnvelope(message!.data);
      expect(envelope).toMatchObject({ type: EVENT_TYPES.FIRE_RUN_ENDED, orgId: 'org-1', projectId: 'project-1', invocationId: 'run-1' });
      const command = unpackPayloadAs(envelope, EVENT_TYPES.FIRE_RUN_ENDED);
      expect({ ...command, scheduledTime: timestampDate(command.scheduledTime!).toISOString(), endedAt: timestampDate(command.endedAt!).toISOString() }).toMatchObject({
        invocationId: 'run-1',
        scheduleId: 'daily',
        status: 'FAILED',
        scheduledTime,
        endedAt,
      });
    });

    it('says nothing for a transition that does not end the run, a run still going, or a run that is no fire’s', () => {
      expect(fireRunEndedMessage(fireRun({ status: 'RUNNING', completedAt: null }), stored('InvocationStarted'), owner)).toBeNull();
      // A failed attempt that is retried ends nothing.
      expect(fireRunEndedMessage(fireRun({ status: 'QUEUED' }), stored('InvocationRetryScheduled'), owner)).toBeNull();
      expect(fireRunEndedMessage(fireRun({}), stored('InvocationApprovalDecided'), owner)).toBeNull();
      expect(fireRunEndedMessage(fireRun({ triggerSource: 'WEBHOOK', schedulerJobName: null, scheduledFor: null }), stored('InvocationSucceeded'), owner)).toBeNull();
      expect(fireRunEndedMessage(fireRun({ schedulerJobName: 'start:42' }), stored('InvocationSucceeded'), owner)).toBeNull();
      expect(fireRunEndedMessage(null, [], owner)).toBeNull();
    });
  });
});
