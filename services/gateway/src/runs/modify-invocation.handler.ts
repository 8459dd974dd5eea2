import { Injectable } from '@nestjs/common';
import {
  create,
  fromBinary,
  INVOCATION_REQUEST_SUBJECTS,
  ModifyAction,
  ModifyInvocationReplySchema,
  ModifyInvocationRequestSchema,
  ModifyOutcome,
  timestampFromDate,
  toBinary,
} from '@runline/contracts';
import { InvocationAccess, type InvocationCaller } from '../platform/access/invocation-access.js';
import { DomainError } from '../platform/errors/domain-error.js';
import { API_ERRORS } from '../platform/errors/error-messages.js';
import { RUN_MESSAGES } from './run-messages.js';
import { invocationAnswer, type InvocationChange } from '../platform/invocations/invocation-answer.js';
import { schedulingFieldsOf } from './scheduling-fields.js';
import { ServiceClient } from '../platform/service-client/service-client.js';

export interface ModifyInvocationCommand {
  caller: InvocationCaller;
  invocationId: string;
  body: InvocationChange;
  /** When the gateway received the request (the base of delaySeconds). */
  receivedAt: Date;
}

/**
 * Cancels or reschedules a SCHEDULED async run, for the token that started it (or a console
 * member with edit access: `executeForMember`). The request is checked before the run is
 * looked up, so a refused request never tells whether an id exists: action (invalid),
 * approve/reject (forbidden `Unauthorized`: an API token never may), the action's fields
 * (invalid). Then the token rules of InvocationAccess, then the invocation service decides
 * against the run's state: the run as changed, not found, or one of the three conflicts the
 * spec documents. This file is the gateway's side of those three: the outcome names the
 * conflict, and the message here is the spec's.
 */
@Injectable()
export class ModifyInvocationHandler {
  constructor(
    private readonly services: ServiceClient,
    private readonly access: InvocationAccess,
  ) {}

  async execute(command: ModifyInvocationCommand): Promise<unknown> {
    const change = changeOf(command.body, command.receivedAt);
    await this.access.authorized({ caller: command.caller, invocationId: command.invocationId });
    return this.modify({ ...command, orgId: command.caller.orgId }, change);
  }

  /**
   * Cancel or reschedule for a signed-in member with edit access (checked by the caller): the
   * same body rules, outcomes and messages as for the token that started the run.
   */
  async executeForMember(command: Omit<ModifyInvocationCommand, 'caller'> & { orgId: string }): Promise<unknown> {
    return this.modify(command, changeOf(command.body, command.receivedAt));
  }

  private async modify(command: { orgId: string; invocationId: string; receivedAt: Date }, change: { action: ModifyAction; runAt?: Date }): Promise<unknown> {
    const request = create(ModifyInvocationRequestSchema, {
      orgId: command.orgId,
      invocationId: command.invocationId,
      action: change.action,
      runAt: change.runAt ? timestampFromDate(change.runAt) : undefined,
      receivedAt: timestampFromDate(command.receivedAt),
    });
    const replyBytes = await this.services.request('invocation', INVOCATION_REQUEST_SUBJECTS.MODIFY_INVOCATION, toBinary(ModifyInvocationRequestSchema, request));
    const reply = fromBinary(ModifyInvocationReplySchema, replyBytes);
    switch (reply.outcome) {
      case ModifyOutcome.MODIFIED:
        return invocationAnswer(JSON.parse(reply.invocationJson) as Record<string, unknown>);
      case ModifyOutcome.NOT_FOUND:
        throw new DomainError('not-found', API_ERRORS.invocationNotFound);
      case ModifyOutcome.NOT_ASYNC:
        throw new DomainError('conflict', RUN_MESSAGES.notAsync);
      case ModifyOutcome.NOT_SCHEDULED:
        throw new DomainError('conflict', RUN_MESSAGES.notScheduled);
      case ModifyOutcome.NO_LONGER_SCHEDULED:
        throw new DomainError('conflict', RUN_MESSAGES.noLongerScheduled);
      case ModifyOutcome.SCHEDULER_UNAVAILABLE:
        throw new DomainError('unavailable', RUN_MESSAGES.schedulerServiceUnavailable);
      default:
        // No outcome, or one this gateway does not know: a broken contract. A 500, details in the log.
        throw new Error(`ModifyInvocation for ${command.invocationId} answered with outcome ${String(reply.outcome)}`);
    }
  }
}

/** What the body asks the invocation service for, or the refusal (invalid, forbidden). */
export function changeOf(body: InvocationChange, receivedAt: Date): { action: ModifyAction; runAt?: Date } {
  switch (body.action) {
    case 'approve':
    case 'reject':
      throw new DomainError('forbidden', API_ERRORS.unauthorized);
    case 'cancel': {
      const others = Object.keys(body).filter((field) => field !== 'action' && body[field] !== undefined);
      if (others.length > 0) throw new DomainError('invalid', RUN_MESSAGES.cancelTakesNoFields);
      return { action: ModifyAction.CANCEL };
    }
    case 'reschedule': {
      const scheduling = schedulingFieldsOf(body, receivedAt);
      if (scheduling === undefined) throw new DomainError('invalid', RUN_MESSAGES.rescheduleNeedsTime);
      if ('error' in scheduling) throw new DomainError('invalid', scheduling.error);
      return { action: ModifyAction.RESCHEDULE, runAt: scheduling.runAt };
    }
  }
}
