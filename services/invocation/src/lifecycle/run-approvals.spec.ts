import { DecideApprovalOutcome, decodeEnvelope, EVENT_TYPES, JobKind, timestampDate, unpackPayloadAs } from '@runline/contracts';
import { SecretBox } from '@runline/runtime';
import { TEST_SECRETS_KEY } from '@runline/testing';
import { approvalCheck, approvalDecided, type ApprovalRun, type AwaitingState } from './run-approvals.js';
import type { SuspendedState } from './run-endings.js';

const secrets = new SecretBox(TEST_SECRETS_KEY);
const orgId = '22222222-2222-4222-8222-222222222222';
const suspendedRun: ApprovalRun = {
  id: '11111111-1111-4111-8111-111111111111',
  orgId,
  projectId: '33333333-3333-4333-8333-333333333333',
  status: 'SUSPENDED',
  waitingJob: null,
  sequence: 4,
};
const step = { nodeId: 'gate', type: 'approval' as const, status: 'SUSPENDED' as const, startedAt: '2026-11-25T10:00:00.000Z', completedAt: '2026-11-25T10:00:00.000Z', durationMs: 0 };
const atApproval: SuspendedState = {
  vars: { total: 30 },
  suspension: { kind: 'approval', nodeId: 'gate', title: 'Refund 30?', requestedAt: '2026-11-25T10:00:00.000Z' },
  steps: [{ ...step, nodeId: 'first', type: 'set', status: 'SUCCEEDED' }, step],
  messages: [],
  actions: [],
};

describe('run lifecycle: an approval is decided', () => {
  it('given the run as read, then only a SUSPENDED run of the organization waiting at an undecided approval may be decided', () => {
    const decision = { nodeId: 'gate', decision: 'approve' as const, decidedBy: 'u', decidedAt: '2026-11-25T10:01:00.000Z', comment: null };
    const atWait: SuspendedState = { ...atApproval, suspension: { kind: 'wait', nodeId: 'pause', resumeAt: '2026-11-25T11:00:00.000Z' } };
    const cases: Array<[string, ApprovalRun | null, string, SuspendedState | null, DecideApprovalOutcome | null]> = [
      ['no such run', null, orgId, null, DecideApprovalOutcome.NOT_FOUND],
      ["another organization's run", suspendedRun, 'another-org', atApproval, DecideApprovalOutcome.NOT_FOUND],
      ['a finished run', { ...suspendedRun, status: 'SUCCEEDED' }, orgId, null, DecideApprovalOutcome.NOT_AWAITING_APPROVAL],
      ['a run paused at a Wait', { ...suspendedRun, waitingJob: 'resume-x-2' }, orgId, atWait, DecideApprovalOutcome.NOT_AWAITING_APPROVAL],
      ['a Wait without its job (never so, still refused)', suspendedRun, orgId, atWait, DecideApprovalOutcome.NOT_AWAITING_APPROVAL],
      ['an approval decided already', { ...suspendedRun, waitingJob: 'approval-x-2' }, orgId, { ...atApproval, decision }, DecideApprovalOutcome.NOT_AWAITING_APPROVAL],
      ['a decided approval whose job is gone', suspendedRun, orgId, { ...atApproval, decision }, DecideApprovalOutcome.NOT_AWAITING_APPROVAL],
      ['a run waiting at its approval', suspendedRun, orgId, atApproval, null],
    ];
    for (const [name, run, org, state, blocker] of cases) {
      expect({ name, blocker: approvalCheck(run, org, state).blocker }).toEqual({ name, blocker });
    }
  });

  it('given a run waiting at its approval, when approved, then it stays SUSPENDED with the decision sealed and waits for a RESUME_RUN job due now', () => {
    const now = new Date('2026-11-25T10:05:00.000Z');
    const decided = approvalDecided(suspendedRun, atApproval as AwaitingState, { decision: 'approve', decidedBy: 'user-1', comment: 'ok' }, secrets, now);

    const jobName = `approval-${suspendedRun.id}-2`;
    expect(decided.jobName).toBe(jobName);
    // Optimistic: only while still SUSPENDED at the approval with no job, and unchanged since read.
    expect(decided.expected).toEqual({ status: 'SUSPENDED', waitingJob: null, sequence: 4 });
    expect(decided.change).toMatchObject({ status: 'SUSPENDED', waitingJob: jobName });
    const sealed = JSON.parse(secrets.open(decided.change.sealedResumeState!)) as SuspendedState;
    expect(sealed).toEqual({
      ...atApproval,
      decision: { nodeId: 'gate', decision: 'approve', decidedBy: 'user-1', decidedAt: '2026-11-25T10:05:00.000Z', comment: 'ok' },
    });
    expect(decided.events).toEqual([
      { type: 'InvocationApprovalDecided', nodeId: 'gate', decision: 'approve', decidedBy: 'user-1', decidedAt: '2026-11-25T10:05:00.000Z', comment: 'ok' },
    ]);
    const job = unpackPayloadAs(decodeEnvelope(decided.messages[0]!.data), EVENT_TYPES.SCHEDULE_JOB);
    expect(job).toMatchObject({ name: jobName, kind: JobKind.RESUME_RUN, invocationId: suspendedRun.id, orgId, projectId: suspendedRun.projectId });
    expect(timestampDate(job.dueAt!)).toEqual(now);
  });

  it('given a comment holding a credential, then the event (what clients read) shows it redacted; the sealed state keeps what was said', () => {
    const decided = approvalDecided(suspendedRun, atApproval as AwaitingState, { decision: 'reject', decidedBy: 'user-1', comment: 'Bearer abc.def' }, secrets);
    expect(decided.events[0]).toMatchObject({ decision: 'reject', comment: '[REDACTED]' });
    expect((JSON.parse(secrets.open(decided.change.sealedResumeState!)) as SuspendedState).decision?.comment).toBe('Bearer abc.def');
  });
});
