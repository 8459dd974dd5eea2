/**
 * The run lifecycle, approval side: pure decisions in the manner of `decide`. A run SUSPENDED at
 * an Approval node waits for no scheduler job (`waiting_job` NULL) until someone decides; the
 * decision is recorded (InvocationApprovalDecided), kept in the sealed resume state, and the run
 * then waits for a RESUME_RUN job due at once: the durable backstop that resumes it even if
 * nothing else does (the decider's request claims it sooner when a run slot is free).
 */
import { DecideApprovalOutcome, JobKind } from '@runline/contracts';
import type { SecretBox } from '@runline/runtime';
import { redactSecrets } from '@runline/observability';
import type { ApprovalDecisionName, ApprovalDecisionRecord, SuspendedState } from './run-endings.js';
import type { InvocationStatus, Transition } from './run-lifecycle.js';
import { jobNames, waitForJob, type JobOwner } from './scheduler-jobs.js';

/** What a decider asks. */
export interface ApprovalRequest {
  decision: ApprovalDecisionName;
  decidedBy: string;
  comment: string | null;
}

/** The run as the approval side reads it. */
export type ApprovalRun = JobOwner & { status: InvocationStatus; waitingJob: string | null; sequence: number };

/** The resume state of a run waiting at an approval. */
export type AwaitingState = SuspendedState & { suspension: { kind: 'approval'; nodeId: string } };

/**
 * Whether a decision may apply to the run as read (`awaiting`), or why not: another
 * organization's run or none (NOT_FOUND); a run that is not SUSPENDED at an approval, or whose
 * approval was decided already (it then waits for its resume job): NOT_AWAITING_APPROVAL.
 */
export function approvalCheck(
  run: ApprovalRun | null,
  orgId: string,
  state: SuspendedState | null,
): { blocker: DecideApprovalOutcome } | { blocker: null; awaiting: { run: ApprovalRun; state: AwaitingState } } {
  if (!run || run.orgId !== orgId) return { blocker: DecideApprovalOutcome.NOT_FOUND };
  if (run.status !== 'SUSPENDED' || run.waitingJob !== null || state?.suspension?.kind !== 'approval' || state.decision) {
    return { blocker: DecideApprovalOutcome.NOT_AWAITING_APPROVAL };
  }
  return { blocker: null, awaiting: { run, state: { ...state, suspension: state.suspension } } };
}

/**
 * The decision recorded on a run waiting at its approval: applies only while the run is still
 * SUSPENDED there undecided and unchanged since it was read (`sequence`), so of two concurrent
 * decisions exactly one is recorded. The resume state is sealed again with the decision, and
 * the run waits for a RESUME_RUN job due `now`.
 */
export function approvalDecided(
  run: ApprovalRun,
  state: AwaitingState,
  request: ApprovalRequest,
  secrets: SecretBox,
  now: Date = new Date(),
): Transition & { jobName: string } {
  const decision: ApprovalDecisionRecord = {
    nodeId: state.suspension.nodeId,
    decision: request.decision,
    decidedBy: request.decidedBy,
    decidedAt: now.toISOString(),
    comment: request.comment,
  };
  const wait = waitForJob(JobKind.RESUME_RUN, jobNames.decided(run.id, state.steps.length), run, now);
  return {
    jobName: wait.name,
    expected: { status: 'SUSPENDED', waitingJob: null, sequence: run.sequence },
    change: { status: 'SUSPENDED', sealedResumeState: secrets.seal(JSON.stringify({ ...state, decision } satisfies SuspendedState)), waitingJob: wait.name },
    events: [{ type: 'InvocationApprovalDecided', ...decision, comment: decision.comment === null ? null : redactSecrets(decision.comment) }],
    messages: [wait.command],
  };
}
