import {
  BackfillScheduleReplySchema,
  BackfillScheduleRequestSchema,
  create,
  fromBinary,
  SCHEDULER_REQUEST_SUBJECTS,
  ScheduleRunOutcome,
  timestampDate,
  toBinary,
} from '@runline/contracts';
import { FakeServiceClient, refusalOf } from '../../test/fake-service-client.js';
import { SERVICE_UNAVAILABLE } from '../platform/service-client/service-client.js';
import { BackfillScheduleHandler } from './backfill-schedule.handler.js';
import { SCHEDULE_MESSAGES } from './schedule-messages.js';

const BACKFILL = SCHEDULER_REQUEST_SUBJECTS.BACKFILL_SCHEDULE;
const scope = { orgId: 'o-1', projectId: 'p-1', configVersion: 7 };
const range = { from: '2030-01-01T00:00:00Z', to: '2030-01-01T01:00:00Z' };
const reply = (outcome: ScheduleRunOutcome, count = 0) => toBinary(BackfillScheduleReplySchema, create(BackfillScheduleReplySchema, { outcome, count, limit: 1000 }));

describe('BackfillScheduleHandler', () => {
  it('asks the scheduler for the range and answers the count', async () => {
    const services = new FakeServiceClient().answer(BACKFILL, reply(ScheduleRunOutcome.ACCEPTED, 60));
    expect(await new BackfillScheduleHandler(services.asClient()).execute(scope, 'tick', range)).toEqual({ count: 60 });
    const request = fromBinary(BackfillScheduleRequestSchema, services.callsTo(BACKFILL)[0]!.request);
    expect(request).toMatchObject({ orgId: 'o-1', projectId: 'p-1', scheduleId: 'tick', configVersion: 7n });
    expect(timestampDate(request.from!).toISOString()).toBe('2030-01-01T00:00:00.000Z');
    expect(timestampDate(request.to!).toISOString()).toBe('2030-01-01T01:00:00.000Z');
  });

  it.each([
    [{}, SCHEDULE_MESSAGES.fromToRequired],
    [{ from: range.from }, SCHEDULE_MESSAGES.fromToRequired],
    [{ ...range, from: 'yesterday' }, SCHEDULE_MESSAGES.dateInvalid('from')],
    [{ ...range, to: 42 }, SCHEDULE_MESSAGES.dateInvalid('to')],
    [{ from: range.to, to: range.from }, SCHEDULE_MESSAGES.fromNotBeforeTo],
    [{ from: range.from, to: range.from }, SCHEDULE_MESSAGES.fromNotBeforeTo],
    [{ ...range, dryRun: true }, SCHEDULE_MESSAGES.unknownField('dryRun')],
  ])('body %j: invalid, and the scheduler is not asked', async (body, message) => {
    const services = new FakeServiceClient();
    expect(await refusalOf(new BackfillScheduleHandler(services.asClient()).execute(scope, 'tick', body))).toBe(`invalid: ${message}`);
    expect(services.calls).toEqual([]);
  });

  it('more fire times than a backfill may start: invalid; an unknown schedule: not found; a silent scheduler: unavailable', async () => {
    const tooMany = new FakeServiceClient().answer(BACKFILL, reply(ScheduleRunOutcome.TOO_MANY));
    expect(await refusalOf(new BackfillScheduleHandler(tooMany.asClient()).execute(scope, 'tick', range))).toBe(`invalid: ${SCHEDULE_MESSAGES.tooMany(1000)}`);
    const missing = new FakeServiceClient().answer(BACKFILL, reply(ScheduleRunOutcome.NOT_FOUND));
    expect(await refusalOf(new BackfillScheduleHandler(missing.asClient()).execute(scope, 'nope', range))).toBe('not-found: Schedule not found');
    const silent = new FakeServiceClient().answer(BACKFILL, 'silent');
    expect(await refusalOf(new BackfillScheduleHandler(silent.asClient()).execute(scope, 'tick', range))).toBe(`unavailable: ${SERVICE_UNAVAILABLE.scheduler}`);
  });
});
