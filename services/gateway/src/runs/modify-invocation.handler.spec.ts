import {
  create,
  fromBinary,
  GetInvocationReplySchema,
  INVOCATION_QUERY_SUBJECTS,
  INVOCATION_REQUEST_SUBJECTS,
  ModifyAction,
  ModifyInvocationReplySchema,
  ModifyInvocationRequestSchema,
  ModifyOutcome,
  timestampDate,
  toBinary,
} from '@runline/contracts';
import { FakeServiceClient, refusalOf } from '../../test/fake-service-client.js';
import { InvocationAccess } from '../platform/access/invocation-access.js';
import { API_ERRORS } from '../platform/errors/error-messages.js';
import { RUN_MESSAGES } from './run-messages.js';
import type { InvocationChange } from '../platform/invocations/invocation-answer.js';
import { ModifyInvocationHandler } from './modify-invocation.handler.js';

const GET = INVOCATION_QUERY_SUBJECTS.GET_INVOCATION;
const MODIFY = INVOCATION_REQUEST_SUBJECTS.MODIFY_INVOCATION;
const receivedAt = new Date('2030-01-01T10:00:00.000Z');
const caller = { tokenId: 't-1', orgId: 'o-1', scopes: ['flow:trigger' as const] };

const run = (fields: Record<string, unknown> = {}) =>
  toBinary(GetInvocationReplySchema, create(GetInvocationReplySchema, { found: true, startedByTokenId: 't-1', targetType: 'FLOW', ...fields }));
const modified = (outcome: ModifyOutcome, invocation: Record<string, unknown> = {}) =>
  toBinary(ModifyInvocationReplySchema, create(ModifyInvocationReplySchema, { outcome, invocationJson: JSON.stringify(invocation) }));

function handlerWith(services: FakeServiceClient) {
  return new ModifyInvocationHandler(services.asClient(), new InvocationAccess(services.asClient()));
}

const body = (fields: Record<string, unknown>) => fields as unknown as InvocationChange;


describe('ModifyInvocationHandler: the request is checked before the run is looked up', () => {
  it.each([
    [{ action: 'approve' }, `forbidden: ${API_ERRORS.unauthorized}`],
    [{ action: 'reject' }, `forbidden: ${API_ERRORS.unauthorized}`],
    [{ action: 'cancel', runAt: '2030-01-02T00:00:00Z' }, `invalid: ${RUN_MESSAGES.cancelTakesNoFields}`],
    [{ action: 'reschedule' }, `invalid: ${RUN_MESSAGES.rescheduleNeedsTime}`],
    [{ action: 'reschedule', runAt: '2029-01-01T00:00:00Z' }, `invalid: ${RUN_MESSAGES.runAtNotInFuture}`],
  ])('%j: %s, and no service is asked', async (fields, expected) => {
    const services = new FakeServiceClient();
    expect(await refusalOf(handlerWith(services).execute({ caller, invocationId: 'i-1', body: body(fields), receivedAt }))).toBe(expected);
    expect(services.calls).toEqual([]);
  });
});

describe('ModifyInvocationHandler: the token rules', () => {
  it.each([
    [{ found: false }, `not-found: ${API_ERRORS.invocationNotFound}`],
    [{ startedByTokenId: 't-2' }, `forbidden: ${API_ERRORS.tokenMismatch}`],
    [{ targetType: 'AUTOMATION' }, `forbidden: ${API_ERRORS.insufficientScope}`],
  ])('a run read as %j: %s, and nothing is changed', async (fields, expected) => {
    const services = new FakeServiceClient().answer(GET, run(fields));
    expect(await refusalOf(handlerWith(services).execute({ caller, invocationId: 'i-1', body: body({ action: 'cancel' }), receivedAt }))).toBe(expected);
    expect(services.callsTo(MODIFY)).toEqual([]);
  });

  it('a member (the console) skips the token rules', async () => {
    const services = new FakeServiceClient().answer(MODIFY, modified(ModifyOutcome.MODIFIED, { invocationId: 'i-1', status: 'CANCELLED' }));
    expect(await handlerWith(services).executeForMember({ orgId: 'o-1', invocationId: 'i-1', body: body({ action: 'cancel' }), receivedAt })).toEqual({ invocationId: 'i-1', status: 'CANCELLED' });
    expect(services.callsTo(GET)).toEqual([]);
  });
});

describe('ModifyInvocationHandler: what the invocation service is asked and what its outcome becomes', () => {
  it('a cancel: the run, its fields in the spec order', async () => {
    const services = new FakeServiceClient().answer(GET, run()).answer(MODIFY, modified(ModifyOutcome.MODIFIED, { status: 'CANCELLED', invocationId: 'i-1' }));
    const answer = await handlerWith(services).execute({ caller, invocationId: 'i-1', body: body({ action: 'cancel' }), receivedAt });
    expect(Object.keys(answer as object)).toEqual(['invocationId', 'status']);
    const sent = fromBinary(ModifyInvocationRequestSchema, services.callsTo(MODIFY)[0]!.request);
    expect(sent).toMatchObject({ orgId: 'o-1', invocationId: 'i-1', action: ModifyAction.CANCEL });
    expect(sent.runAt).toBeUndefined();
    expect(timestampDate(sent.receivedAt!)).toEqual(receivedAt);
  });

  it('a reschedule sends the new start time (delaySeconds from when it was received)', async () => {
    const services = new FakeServiceClient().answer(GET, run()).answer(MODIFY, modified(ModifyOutcome.MODIFIED, { invocationId: 'i-1' }));
    await handlerWith(services).execute({ caller, invocationId: 'i-1', body: body({ action: 'reschedule', delaySeconds: 30 }), receivedAt });
    const sent = fromBinary(ModifyInvocationRequestSchema, services.callsTo(MODIFY)[0]!.request);
    expect(sent.action).toBe(ModifyAction.RESCHEDULE);
    expect(timestampDate(sent.runAt!)).toEqual(new Date('2030-01-01T10:00:30.000Z'));
  });

  it.each([
    [ModifyOutcome.NOT_FOUND, `not-found: ${API_ERRORS.invocationNotFound}`],
    [ModifyOutcome.NOT_ASYNC, `conflict: ${RUN_MESSAGES.notAsync}`],
    [ModifyOutcome.NOT_SCHEDULED, `conflict: ${RUN_MESSAGES.notScheduled}`],
    [ModifyOutcome.NO_LONGER_SCHEDULED, `conflict: ${RUN_MESSAGES.noLongerScheduled}`],
    [ModifyOutcome.SCHEDULER_UNAVAILABLE, `unavailable: ${RUN_MESSAGES.schedulerServiceUnavailable}`],
  ])('outcome %s: %s', async (outcome, expected) => {
    const services = new FakeServiceClient().answer(MODIFY, modified(outcome));
    expect(await refusalOf(handlerWith(services).executeForMember({ orgId: 'o-1', invocationId: 'i-1', body: body({ action: 'cancel' }), receivedAt }))).toBe(expected);
  });

  it('an outcome it does not know is a broken contract (a 500), not a refusal', async () => {
    const services = new FakeServiceClient().answer(MODIFY, modified(ModifyOutcome.UNSPECIFIED));
    await expect(handlerWith(services).executeForMember({ orgId: 'o-1', invocationId: 'i-1', body: body({ action: 'cancel' }), receivedAt })).rejects.toThrow(/answered with outcome/);
  });

  it('a silent invocation service: unavailable', async () => {
    const services = new FakeServiceClient().answer(MODIFY, 'silent');
    expect(await refusalOf(handlerWith(services).executeForMember({ orgId: 'o-1', invocationId: 'i-1', body: body({ action: 'cancel' }), receivedAt }))).toBe(
      `unavailable: ${API_ERRORS.invocationServiceUnavailable}`,
    );
  });
});
