import { create, fromBinary, SCHEDULER_REQUEST_SUBJECTS, ScheduleRunOutcome, toBinary, TriggerScheduleReplySchema, TriggerScheduleRequestSchema } from '@runline/contracts';
import { FakeServiceClient, refusalOf } from '../../test/fake-service-client.js';
import { TriggerScheduleHandler } from './trigger-schedule.handler.js';

const TRIGGER = SCHEDULER_REQUEST_SUBJECTS.TRIGGER_SCHEDULE;
const scope = { orgId: 'o-1', projectId: 'p-1', configVersion: 3 };
const reply = (fields: Parameters<typeof create<typeof TriggerScheduleReplySchema>>[1]) => toBinary(TriggerScheduleReplySchema, create(TriggerScheduleReplySchema, fields));

describe('TriggerScheduleHandler', () => {
  it('answers the run the scheduler started, passing on the configuration version read for the request', async () => {
    const services = new FakeServiceClient().answer(TRIGGER, reply({ outcome: ScheduleRunOutcome.ACCEPTED, invocationId: 'inv-1' }));
    expect(await new TriggerScheduleHandler(services.asClient()).execute(scope, 'tick')).toEqual({ invocationId: 'inv-1' });
    expect(fromBinary(TriggerScheduleRequestSchema, services.callsTo(TRIGGER)[0]!.request)).toMatchObject({ orgId: 'o-1', projectId: 'p-1', scheduleId: 'tick', configVersion: 3n });
  });

  it('an unknown schedule: not found; no run recorded: unprocessable with the reason, or unavailable when the invocation service asked for a retry', async () => {
    const missing = new FakeServiceClient().answer(TRIGGER, reply({ outcome: ScheduleRunOutcome.NOT_FOUND }));
    expect(await refusalOf(new TriggerScheduleHandler(missing.asClient()).execute(scope, 'nope'))).toBe('not-found: Schedule not found');
    const quota = new FakeServiceClient().answer(TRIGGER, reply({ outcome: ScheduleRunOutcome.NOT_STARTED, reason: 'Monthly API call quota exceeded' }));
    expect(await refusalOf(new TriggerScheduleHandler(quota.asClient()).execute(scope, 'tick'))).toBe('unprocessable: Monthly API call quota exceeded');
    const busy = new FakeServiceClient().answer(TRIGGER, reply({ outcome: ScheduleRunOutcome.NOT_STARTED, reason: 'The project was deleted', unavailable: true }));
    expect(await refusalOf(new TriggerScheduleHandler(busy.asClient()).execute(scope, 'tick'))).toBe('unavailable: The project was deleted');
  });
});
