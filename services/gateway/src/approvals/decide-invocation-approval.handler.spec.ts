import {
  ApprovalDecision,
  create,
  DecideApprovalOutcome,
  DecideApprovalReplySchema,
  DecideApprovalRequestSchema,
  fromBinary,
  INVOCATION_REQUEST_SUBJECTS,
  toBinary,
} from '@runline/contracts';
import { FakeServiceClient, refusalOf } from '../../test/fake-service-client.js';
import { API_ERRORS } from '../platform/errors/error-messages.js';
import { APPROVAL_MESSAGES } from './approval-messages.js';
import { DecideInvocationApprovalHandler, MAX_APPROVAL_COMMENT_LENGTH, type DecideInvocationApprovalCommand } from './decide-invocation-approval.handler.js';

const DECIDE = INVOCATION_REQUEST_SUBJECTS.DECIDE_APPROVAL;
const decided = (outcome: DecideApprovalOutcome, invocation: Record<string, unknown> = {}) =>
  toBinary(DecideApprovalReplySchema, create(DecideApprovalReplySchema, { outcome, invocationJson: JSON.stringify(invocation) }));

function command(body: Record<string, unknown>): DecideInvocationApprovalCommand {
  return { orgId: 'o-1', invocationId: 'i-1', body: body as DecideInvocationApprovalCommand['body'], decidedBy: 'user-1' };
}


const sent = (services: FakeServiceClient) => fromBinary(DecideApprovalRequestSchema, services.callsTo(DECIDE)[0]!.request);

describe('DecideInvocationApprovalHandler: the body', () => {
  it.each([
    [{ action: 'approve', runAt: '2030-01-01T00:00:00Z' }, `invalid: ${APPROVAL_MESSAGES.takesComment}`],
    [{ action: 'reject', comment: 5 }, `invalid: ${APPROVAL_MESSAGES.commentInvalid}`],
    [{ action: 'approve', comment: 'x'.repeat(MAX_APPROVAL_COMMENT_LENGTH + 1) }, `invalid: ${APPROVAL_MESSAGES.commentInvalid}`],
  ])('%j: %s, and the invocation service is not asked', async (body, expected) => {
    const services = new FakeServiceClient();
    expect(await refusalOf(new DecideInvocationApprovalHandler(services.asClient()).execute(command(body)))).toBe(expected);
    expect(services.calls).toEqual([]);
  });

  it('sends the decision, who decided, and the comment', async () => {
    const services = new FakeServiceClient().answer(DECIDE, decided(DecideApprovalOutcome.RESUMED, { invocationId: 'i-1' }));
    await new DecideInvocationApprovalHandler(services.asClient()).execute(command({ action: 'reject', comment: 'not today' }));
    expect(sent(services)).toMatchObject({ orgId: 'o-1', invocationId: 'i-1', decision: ApprovalDecision.REJECT, decidedBy: 'user-1', comment: 'not today' });
  });

  it.each([[undefined], [null], ['   ']])('sends no comment for %j', async (comment) => {
    const services = new FakeServiceClient().answer(DECIDE, decided(DecideApprovalOutcome.RESUMED, { invocationId: 'i-1' }));
    await new DecideInvocationApprovalHandler(services.asClient()).execute(command({ action: 'approve', comment }));
    expect(sent(services).decision).toBe(ApprovalDecision.APPROVE);
    expect(sent(services).comment ?? '').toBe('');
  });
});

describe('DecideInvocationApprovalHandler: the outcome', () => {
  it('resumed: the run, its fields in the spec order', async () => {
    const services = new FakeServiceClient().answer(DECIDE, decided(DecideApprovalOutcome.RESUMED, { status: 'RUNNING', invocationId: 'i-1' }));
    const answer = await new DecideInvocationApprovalHandler(services.asClient()).execute(command({ action: 'approve' }));
    expect(answer).toEqual({ invocationId: 'i-1', status: 'RUNNING' });
    expect(Object.keys(answer as object)).toEqual(['invocationId', 'status']);
  });

  it.each([
    [DecideApprovalOutcome.NOT_FOUND, `not-found: ${API_ERRORS.invocationNotFound}`],
    [DecideApprovalOutcome.NOT_AWAITING_APPROVAL, `conflict: ${APPROVAL_MESSAGES.notAwaitingApproval}`],
    [DecideApprovalOutcome.NOT_RESUMED, `incomplete: ${APPROVAL_MESSAGES.notResumed}`],
  ])('outcome %s: %s', async (outcome, expected) => {
    const services = new FakeServiceClient().answer(DECIDE, decided(outcome));
    expect(await refusalOf(new DecideInvocationApprovalHandler(services.asClient()).execute(command({ action: 'approve' })))).toBe(expected);
  });

  it('an outcome it does not know is a broken contract, and a silent service is unavailable', async () => {
    const unknown = new FakeServiceClient().answer(DECIDE, decided(DecideApprovalOutcome.UNSPECIFIED));
    await expect(new DecideInvocationApprovalHandler(unknown.asClient()).execute(command({ action: 'approve' }))).rejects.toThrow(/answered with outcome/);
    const silent = new FakeServiceClient().answer(DECIDE, 'silent');
    expect(await refusalOf(new DecideInvocationApprovalHandler(silent.asClient()).execute(command({ action: 'approve' })))).toBe(`unavailable: ${API_ERRORS.invocationServiceUnavailable}`);
  });
});
