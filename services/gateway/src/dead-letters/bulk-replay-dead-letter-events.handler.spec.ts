import {
  BulkReplayDeadLettersReplySchema,
  BulkReplayDeadLettersRequestSchema,
  create,
  DEAD_LETTER_REQUEST_SUBJECTS,
  fromBinary,
  timestampDate,
  toBinary,
} from '@runline/contracts';
import { FakeServiceClient, refusalOf } from '../../test/fake-service-client.js';
import { SERVICE_UNAVAILABLE } from '../platform/service-client/service-client.js';
import { BULK_REPLAY_MESSAGES, BulkReplayDeadLetterEventsHandler, replyBudgetMs } from './bulk-replay-dead-letter-events.handler.js';

const BULK = DEAD_LETTER_REQUEST_SUBJECTS.BULK_REPLAY_DEAD_LETTERS;
const scope = { orgId: 'o-1', projectId: 'p-1', publishedVersion: 4, configVersion: 9 };
const answered = (fields: Record<string, unknown>) => toBinary(BulkReplayDeadLettersReplySchema, create(BulkReplayDeadLettersReplySchema, fields as never));


describe('BulkReplayDeadLetterEventsHandler: the body', () => {
  it.each([
    [{}, BULK_REPLAY_MESSAGES.filterRequired],
    [{ filter: null }, BULK_REPLAY_MESSAGES.filterRequired],
    [{ filter: [] }, BULK_REPLAY_MESSAGES.filterNotObject],
    [{ filter: {}, limit: 5 }, BULK_REPLAY_MESSAGES.unknownField('limit')],
    [{ filter: { status: 'x' } }, BULK_REPLAY_MESSAGES.unknownField('filter.status')],
    [{ filter: { source: '' } }, BULK_REPLAY_MESSAGES.sourceInvalid],
    [{ filter: { targetType: 'BOT' } }, BULK_REPLAY_MESSAGES.targetTypeInvalid],
    [{ filter: { from: 'yesterday' } }, BULK_REPLAY_MESSAGES.dateInvalid('from')],
    [{ filter: { from: '2030-01-02T00:00:00Z', to: '2030-01-01T00:00:00Z' } }, BULK_REPLAY_MESSAGES.fromAfterTo],
    [{ filter: {}, dryRun: 'yes' }, BULK_REPLAY_MESSAGES.dryRunInvalid],
  ])('%j: invalid "%s", and the dead-letter service is not asked', async (body, message) => {
    const services = new FakeServiceClient();
    expect(await refusalOf(new BulkReplayDeadLetterEventsHandler(services.asClient()).execute(scope, body))).toBe(`invalid: ${message}`);
    expect(services.calls).toEqual([]);
  });
});

describe('BulkReplayDeadLetterEventsHandler: what the dead-letter service is asked', () => {
  it('the filter, the versions the client was answered from, and a budget inside the gateway deadline', async () => {
    const services = new FakeServiceClient().answer(BULK, answered({ matched: 3, succeeded: 2, failed: 1, pending: 0, remaining: 0 }));
    await new BulkReplayDeadLetterEventsHandler(services.asClient()).execute(scope, {
      filter: { source: 'polling:feed', targetType: 'FLOW', from: '2030-01-01T00:00:00Z', to: '2030-01-02T00:00:00Z' },
    });
    const sent = fromBinary(BulkReplayDeadLettersRequestSchema, services.callsTo(BULK)[0]!.request);
    expect(sent).toMatchObject({ orgId: 'o-1', projectId: 'p-1', source: 'polling:feed', targetType: 'FLOW', dryRun: false, publishedVersion: 4, configVersion: 9n });
    expect(timestampDate(sent.from!)).toEqual(new Date('2030-01-01T00:00:00Z'));
    expect(timestampDate(sent.to!)).toEqual(new Date('2030-01-02T00:00:00Z'));
    expect(sent.budgetMs).toBe(replyBudgetMs(services.deadlineMs));
    expect(sent.budgetMs).toBeLessThan(services.deadlineMs);
  });

  it('an empty filter matches everything: no source, type or dates sent', async () => {
    const services = new FakeServiceClient().answer(BULK, answered({ matched: 0 }));
    await new BulkReplayDeadLetterEventsHandler(services.asClient()).execute(scope, { filter: {} });
    const sent = fromBinary(BulkReplayDeadLettersRequestSchema, services.callsTo(BULK)[0]!.request);
    expect(sent).toMatchObject({ source: '', targetType: '' });
    expect(sent.from).toBeUndefined();
    expect(sent.to).toBeUndefined();
  });
});

describe('BulkReplayDeadLetterEventsHandler: the answer', () => {
  it('a dry run answers only how many match', async () => {
    const services = new FakeServiceClient().answer(BULK, answered({ matched: 7, invocationUnavailable: true }));
    expect(await new BulkReplayDeadLetterEventsHandler(services.asClient()).execute(scope, { filter: {}, dryRun: true })).toEqual({ matched: 7 });
    expect(fromBinary(BulkReplayDeadLettersRequestSchema, services.callsTo(BULK)[0]!.request).dryRun).toBe(true);
  });

  it('a replay answers the figures, and what is left', async () => {
    const services = new FakeServiceClient().answer(BULK, answered({ matched: 10, succeeded: 4, failed: 1, pending: 0, remaining: 5 }));
    expect(await new BulkReplayDeadLetterEventsHandler(services.asClient()).execute(scope, { filter: {} })).toEqual({ matched: 10, succeeded: 4, failed: 1, pending: 0, remaining: 5 });
  });

  it('the invocation service silent behind it: unavailable, with its message', async () => {
    const services = new FakeServiceClient().answer(BULK, answered({ matched: 2, invocationUnavailable: true }));
    expect(await refusalOf(new BulkReplayDeadLetterEventsHandler(services.asClient()).execute(scope, { filter: {} }))).toBe(`unavailable: ${SERVICE_UNAVAILABLE.invocation}`);
  });

  it('the dead-letter service silent: unavailable, with its message', async () => {
    const services = new FakeServiceClient().answer(BULK, 'silent');
    expect(await refusalOf(new BulkReplayDeadLetterEventsHandler(services.asClient()).execute(scope, { filter: {} }))).toBe(`unavailable: ${SERVICE_UNAVAILABLE.deadLetter}`);
  });
});

describe('replyBudgetMs', () => {
  it('leaves a fifth of the deadline for the way back, at most 2 s', () => {
    expect(replyBudgetMs(5000)).toBe(4000);
    expect(replyBudgetMs(30_000)).toBe(28_000);
    expect(replyBudgetMs(1)).toBe(1);
  });
});
