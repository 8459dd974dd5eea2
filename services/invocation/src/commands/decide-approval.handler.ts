import { Controller, Inject } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import {
  ApprovalDecision,
  create,
  DecideApprovalOutcome,
  DecideApprovalReplySchema,
  DecideApprovalRequestSchema,
  fromBinary,
  INVOCATION_REQUEST_SUBJECTS,
  isUuid,
  toBinary,
  type DecideApprovalReply,
  type DecideApprovalRequest,
} from '@runline/contracts';
import { TransactionRunner } from '@runline/db';
import type { Logger } from '@runline/observability';
import { LOGGER, retryTransient, SecretBox } from '@runline/runtime';
import { InvocationConfig } from '../config.js';
import { approvalCheck, approvalDecided } from '../lifecycle/run-approvals.js';
import type { ApprovalDecisionName, SuspendedState } from '../lifecycle/run-endings.js';
import { historyAppend } from '../lifecycle/run-history.js';
import { readDocument, readKnownInvocation } from '../runs/run-reads.repository.js';
import { RunStarter } from '../runs/run-starter.js';
import { transition } from '../runs/run-transitions.repository.js';

const DECISIONS: Partial<Record<ApprovalDecision, ApprovalDecisionName>> = {
  [ApprovalDecision.APPROVE]: 'approve',
  [ApprovalDecision.REJECT]: 'reject',
};

/**
 * Approves or rejects a run SUSPENDED at an Approval node (PATCH /external-invocations/{id}
 * with a console JWT; the gateway has checked the member's edit access). First the decision is
 * recorded, with the RESUME_RUN job that resumes the run whatever happens next (run-approvals.ts);
 * then the run is claimed here at once if a run slot frees within APPROVAL_SLOT_WAIT_MS. Not
 * claimed in time, or an error after the decision was recorded: NOT_RESUMED (the gateway's 502),
 * and the job resumes the run once a slot is free.
 */
@Controller()
export class DecideApprovalHandler {
  constructor(
    private readonly transactions: TransactionRunner,
    private readonly starter: RunStarter,
    @Inject(SecretBox) private readonly secrets: SecretBox,
    @Inject(InvocationConfig) private readonly config: InvocationConfig,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  @MessagePattern(INVOCATION_REQUEST_SUBJECTS.DECIDE_APPROVAL)
  async execute(@Payload() data: Uint8Array): Promise<Uint8Array> {
    const reply = await this.decide(fromBinary(DecideApprovalRequestSchema, data));
    return toBinary(DecideApprovalReplySchema, reply);
  }

  private async decide(request: DecideApprovalRequest): Promise<DecideApprovalReply> {
    const decision = DECISIONS[request.decision];
    if (!decision) throw new Error(`DecideApproval: unsupported decision ${request.decision}`);
    const manager = this.transactions.dataSource.manager;
    const row = isUuid(request.invocationId) ? await readKnownInvocation(manager, request.invocationId) : null;
    const state = row?.sealedResumeState ? (JSON.parse(this.secrets.open(row.sealedResumeState)) as SuspendedState) : null;
    const check = approvalCheck(row?.known ? { ...row, sequence: row.known.sequence } : null, request.orgId, state);
    if (check.blocker !== null) return outcome(check.blocker);
    const { run } = check.awaiting;

    const comment = request.comment ?? null;
    const decided = approvalDecided(run, check.awaiting.state, { decision, decidedBy: request.decidedBy, comment }, this.secrets);
    const recorded = await this.transactions.run((tx) => transition(tx, run.id, decided.expected, decided.change, historyAppend(decided)));
    // Not applied: another decision (or anything else) changed the run since it was read.
    if (!recorded) return outcome(DecideApprovalOutcome.NOT_AWAITING_APPROVAL);
    this.logger.info({ invocationId: run.id, decision, decidedBy: request.decidedBy }, 'approval decided');

    try {
      const attempt = await this.starter.resume(run.id, decided.jobName, () => Promise.resolve(), 0, { slotWaitMs: this.config.APPROVAL_SLOT_WAIT_MS });
      if (attempt === 'no-slot') {
        this.logger.warn({ invocationId: run.id, slotWaitMs: this.config.APPROVAL_SLOT_WAIT_MS }, 'approval recorded but no run slot freed in time; its job resumes the run later');
        return outcome(DecideApprovalOutcome.NOT_RESUMED);
      }
      // Claimed here, or already by the fired job: the run as it is now (RUNNING, or further).
      const document = await retryTransient(() => readDocument(manager, run.id));
      if (!document) throw new Error(`run ${run.id} has no read model`);
      return create(DecideApprovalReplySchema, { outcome: DecideApprovalOutcome.RESUMED, invocationJson: JSON.stringify(document) });
    } catch (error) {
      this.logger.error({ err: error, invocationId: run.id }, 'approval recorded but the run could not be resumed now; its job resumes it later');
      return outcome(DecideApprovalOutcome.NOT_RESUMED);
    }
  }
}

function outcome(value: DecideApprovalOutcome): DecideApprovalReply {
  return create(DecideApprovalReplySchema, { outcome: value });
}
