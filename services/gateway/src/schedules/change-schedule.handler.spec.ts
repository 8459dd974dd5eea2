import { ChangeScheduleReplySchema, ChangeScheduleRequestSchema, create, fromBinary, SCHEDULER_REQUEST_SUBJECTS, ScheduleChange, toBinary } from '@runline/contracts';
import { FakeServiceClient, refusalOf } from '../../test/fake-service-client.js';
import { ChangeScheduleHandler } from './change-schedule.handler.js';

const CHANGE = SCHEDULER_REQUEST_SUBJECTS.CHANGE_SCHEDULE;
const scope = { orgId: 'o-1', projectId: 'p-1' };

describe('ChangeScheduleHandler', () => {
  it.each([
    ['pause', ScheduleChange.PAUSE],
    ['resume', ScheduleChange.RESUME],
  ] as const)('%s: asks the scheduler and answers the schedule as it now is', async (change, wire) => {
    const schedule = { id: 'tick', paused: change === 'pause' };
    const services = new FakeServiceClient().answer(CHANGE, toBinary(ChangeScheduleReplySchema, create(ChangeScheduleReplySchema, { found: true, scheduleJson: JSON.stringify(schedule) })));
    expect(await new ChangeScheduleHandler(services.asClient()).execute(scope, 'tick', change)).toEqual(schedule);
    expect(fromBinary(ChangeScheduleRequestSchema, services.callsTo(CHANGE)[0]!.request)).toMatchObject({ orgId: 'o-1', projectId: 'p-1', scheduleId: 'tick', change: wire });
  });

  it('an unknown schedule: not found', async () => {
    const services = new FakeServiceClient().answer(CHANGE, toBinary(ChangeScheduleReplySchema, create(ChangeScheduleReplySchema, { found: false })));
    expect(await refusalOf(new ChangeScheduleHandler(services.asClient()).execute(scope, 'nope', 'pause'))).toBe('not-found: Schedule not found');
  });
});
