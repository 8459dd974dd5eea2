import { Inject, Injectable } from '@nestjs/common';
import { BUS, type Bus } from '@runline/bus';
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
import { GatewayConfig } from '../config.js';
import { API_ERRORS, ApiError } from '../http/api-error.js';
import type { ExternalCaller } from '../http/external/external-api.guard.js';
import type { ModifyInvocationBody } from '../http/external/external-bodies.dto.js';
import { schedulingFieldsOf } from '../http/external/scheduling-fields.js';
import { requestInvocationService } from '../invocation-service-request.js';
import { GetInvocationHandler } from '../queries/get-invocation.handler.js';
import { invocationAnswer } from '../queries/invocation-answer.js';

export interface ModifyInvocationCommand {
  caller: ExternalCaller;
  invocationId: string;
  body: ModifyInvocationBody;
  /** When the gateway received the request (the base of delaySeconds). */
  receivedAt: Date;
}

/**
 * PATCH /external-invocations/{id}: cancel or reschedule a SCHEDULED async run. The request
 * is checked before the run is looked up, so a refused request never tells whether an id
 * exists: action (400), approve/reject (403 `Unauthorized`: an API token never may), the
 * action's fields (400). Then the token rules of GET (404, 403, 403), then the invocation
 * service decides against the run's state (200 with the run, 404, or one of the 409s).
 */
@Injectable()
export class ModifyInvocationHandler {
  constructor(
    @Inject(BUS) private readonly bus: Bus,
    @Inject(GatewayConfig) private readonly config: GatewayConfig,
    private readonly invocations: GetInvocationHandler,
  ) {}

  async execute(command: ModifyInvocationCommand): Promise<unknown> {
    const change = changeOf(command.body, command.receivedAt);
    await this.invocations.authorized({ caller: command.caller, invocationId: command.invocationId });

    const request = create(ModifyInvocationRequestSchema, {
      orgId: command.caller.orgId,
      invocationId: command.invocationId,
      action: change.action,
      runAt: change.runAt ? timestampFromDate(change.runAt) : undefined,
      receivedAt: timestampFromDate(command.receivedAt),
    });
    const replyBytes = await requestInvocationService(
      this.bus,
      INVOCATION_REQUEST_SUBJECTS.MODIFY_INVOCATION,
      toBinary(ModifyInvocationRequestSchema, request),
      this.config.SERVICE_REQUEST_TIMEOUT_MS,
    );
    const reply = fromBinary(ModifyInvocationReplySchema, replyBytes);
    switch (reply.outcome) {
      case ModifyOutcome.MODIFIED:
        return invocationAnswer(JSON.parse(reply.invocationJson) as Record<string, unknown>);
      case ModifyOutcome.NOT_FOUND:
        throw new ApiError(404, API_ERRORS.invocationNotFound);
      case ModifyOutcome.NOT_ASYNC:
        throw new ApiError(409, API_ERRORS.notAsync);
      case ModifyOutcome.NOT_SCHEDULED:
        throw new ApiError(409, API_ERRORS.notScheduled);
      case ModifyOutcome.NO_LONGER_SCHEDULED:
        throw new ApiError(409, API_ERRORS.noLongerScheduled);
      default:
        // No outcome, or one this gateway does not know: a broken contract. A 500, details in the log.
        throw new Error(`ModifyInvocation for ${command.invocationId} answered with outcome ${String(reply.outcome)}`);
    }
  }
}

/** What the body asks the invocation service for, or the 400 / 403 that refuses it. */
export function changeOf(body: ModifyInvocationBody, receivedAt: Date): { action: ModifyAction; runAt?: Date } {
  switch (body.action) {
    case 'approve':
    case 'reject':
      throw new ApiError(403, API_ERRORS.unauthorized);
    case 'cancel': {
      const others = Object.keys(body).filter((field) => field !== 'action' && body[field] !== undefined);
      if (others.length > 0) throw new ApiError(400, API_ERRORS.cancelTakesNoFields);
      return { action: ModifyAction.CANCEL };
    }
    case 'reschedule': {
      const scheduling = schedulingFieldsOf(body, receivedAt);
      if (scheduling === undefined) throw new ApiError(400, API_ERRORS.rescheduleNeedsTime);
      if ('error' in scheduling) throw new ApiError(400, scheduling.error);
      return { action: ModifyAction.RESCHEDULE, runAt: scheduling.runAt };
    }
  }
}
