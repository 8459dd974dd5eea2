import { create, DEAD_LETTER_REQUEST_SUBJECTS, fromBinary, ReplayDeadLetterReplySchema, ReplayDeadLetterRequestSchema, ReplayOutcome, toBinary } from '@runline/contracts';
import { FakeServiceClient, refusalOf } from '../../test/fake-service-client.js';
import { SERVICE_UNAVAILABLE } from '../platform/service-client/service-client.js';
import { DEAD_LETTER_REPLAY_MESSAGES, ReplayDeadLetterEventHandler } from './replay-dead-letter-event.handler.js';

const REPLAY = DEAD_LETTER_REQUEST_SUBJECTS.REPLAY_DEAD_LETTER;
const scope = { orgId: 'o-1', projectId: 'p-1', publishedVersion: 4, configVersion: 9 };
const replayed = (outcome: ReplayOutcome, reason = '') => toBinary(ReplayDeadLetterReplySchema, create(ReplayDeadLetterReplySchema, { outcome, reason }));

describe('ReplayDeadLetterEventHandler', () => {
  it.each([[undefined], ['']])('no id (%j): invalid, and the dead-letter service is not asked', async (id) => {
    const services = new FakeServiceClient();
    expect(await refusalOf(new ReplayDeadLetterEventHandler(services.asClient()).execute(scope, id))).toBe(`invalid: ${DEAD_LETTER_REPLAY_MESSAGES.idRequired}`);
    expect(services.calls).toEqual([]);
  });

  it('asks for the event of this project, with the versions the client was answered from', async () => {
    const services = new FakeServiceClient().answer(REPLAY, replayed(ReplayOutcome.SUCCEEDED));
    expect(await new ReplayDeadLetterEventHandler(services.asClient()).execute(scope, 'e-1')).toEqual({ success: true });
    expect(fromBinary(ReplayDeadLetterRequestSchema, services.callsTo(REPLAY)[0]!.request)).toMatchObject({ orgId: 'o-1', projectId: 'p-1', id: 'e-1', publishedVersion: 4, configVersion: 9n });
  });

  it.each([
    [ReplayOutcome.FAILED, 'unprocessable: the trigger check failed'],
    [ReplayOutcome.ALREADY_REPLAYED, `unprocessable: ${DEAD_LETTER_REPLAY_MESSAGES.alreadyReplayed}`],
    [ReplayOutcome.NOT_FOUND, `unprocessable: ${DEAD_LETTER_REPLAY_MESSAGES.notFound}`],
    [ReplayOutcome.INVOCATION_UNAVAILABLE, `unavailable: ${SERVICE_UNAVAILABLE.invocation}`],
  ])('outcome %s: %s', async (outcome, expected) => {
    const services = new FakeServiceClient().answer(REPLAY, replayed(outcome, 'the trigger check failed'));
    expect(await refusalOf(new ReplayDeadLetterEventHandler(services.asClient()).execute(scope, 'e-1'))).toBe(expected);
  });

  it('a silent dead-letter service: unavailable; an unknown outcome: a broken contract', async () => {
    const silent = new FakeServiceClient().answer(REPLAY, 'silent');
    expect(await refusalOf(new ReplayDeadLetterEventHandler(silent.asClient()).execute(scope, 'e-1'))).toBe(`unavailable: ${SERVICE_UNAVAILABLE.deadLetter}`);
    const unknown = new FakeServiceClient().answer(REPLAY, replayed(ReplayOutcome.UNSPECIFIED));
    await expect(new ReplayDeadLetterEventHandler(unknown.asClient()).execute(scope, 'e-1')).rejects.toThrow(/unexpected replay outcome/);
  });
});
