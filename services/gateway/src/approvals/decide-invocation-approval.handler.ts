import { Injectable } from '@nestjs/common';
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
import { DomainError } from '../platform/errors/domain-error.js';
import { API_ERRORS } from '../platform/errors/error-messages.js';
import { APPROVAL_MESSAGES } from './approval-messages.js';
import { invocationAnswer } from '../platform/invocations/invocation-answer.js';
import { ServiceClient } from '../platform/service-client/service-client.js';
import type { InvocationChange } from '../platform/invocations/invocation-answer.js';

/** Longest comment a decider may leave (ours; the spec sets none). */
export const MAX_APPROVAL_COMMENT_LENGTH = 2000;

export interface DecideInvocationApprovalCommand {
  orgId: string;
  invocationId: string;
  /** `{ action: 'approve' | 'reject', comment? }`. */
  body: InvocationChange & { action: 'approve' | 'reject' };
  /** The signed-in member with edit access (the console JWT's `sub`), checked by the caller. */
  decidedBy: string;
}

/**
 * Approves or rejects a run paused at an Approval node, for a signed-in member with edit
 * access (PATCH /external-invocations/{id} with a console JWT). The body is checked first; then
 * the invocation service records the decision and resumes the run: the run as it is (200), not
 * found, not waiting for approval (409), or recorded but not resumed (502: it resumes later by
 * itself, the decision stands).
 */
@Injectable()
export class DecideInvocationApprovalHandler {
  constructor(private readonly services: ServiceClient) {}

  async execute(command: DecideInvocationApprovalCommand): Promise<unknown> {
    const comment = commentOf(command.body);
    const request = create(DecideApprovalRequestSchema, {
      orgId: command.orgId,
      invocationId: command.invocationId,
      decision: command.body.action === 'approve' ? ApprovalDecision.APPROVE : ApprovalDecision.REJECT,
      decidedBy: command.decidedBy,
      ...(comment === undefined ? {} : { comment }),
    });
    const replyBytes = await this.services.request('invocation', INVOCATION_REQUEST_SUBJECTS.DECIDE_APPROVAL, toBinary(DecideApprovalRequestSchema, request));
    const reply = fromBinary(DecideApprovalReplySchema, replyBytes);
    switch (reply.outcome) {
      case DecideApprovalOutcome.RESUMED:
        return invocationAnswer(JSON.parse(reply.invocationJson) as Record<string, unknown>);
      case DecideApprovalOutcome.NOT_FOUND:
        throw new DomainError('not-found', API_ERRORS.invocationNotFound);
      case DecideApprovalOutcome.NOT_AWAITING_APPROVAL:
        throw new DomainError('conflict', APPROVAL_MESSAGES.notAwaitingApproval);
      case DecideApprovalOutcome.NOT_RESUMED:
        throw new DomainError('incomplete', APPROVAL_MESSAGES.notResumed);
      default:
        // No outcome, or one this gateway does not know: a broken contract. A 500, details in the log.
        throw new Error(`DecideApproval for ${command.invocationId} answered with outcome ${String(reply.outcome)}`);
    }
  }
}

/** The comment (absent when none, or null), or the refusal of a body with other fields or a bad comment. */
function commentOf(body: InvocationChange): string | undefined {
  const others = Object.keys(body).filter((field) => field !== 'action' && field !== 'comment' && body[field] !== undefined);
  if (others.length > 0) throw new DomainError('invalid', APPROVAL_MESSAGES.takesComment);
  const comment = body.comment;
  if (comment === undefined || comment === null) return undefined;
  if (typeof comment !== 'string' || comment.length > MAX_APPROVAL_COMMENT_LENGTH) throw new DomainError('invalid', APPROVAL_MESSAGES.commentInvalid);
  return comment.trim() === '' ? undefined : comment;
}
