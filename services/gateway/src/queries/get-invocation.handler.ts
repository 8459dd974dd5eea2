import { Inject, Injectable } from '@nestjs/common';
import { BUS, type Bus } from '@runline/bus';
import {
  create,
  fromBinary,
  GetInvocationReplySchema,
  GetInvocationRequestSchema,
  INVOCATION_QUERY_SUBJECTS,
  toBinary,
  type GetInvocationReply,
} from '@runline/contracts';
import type { TokenScope } from '../entities/api-token.entity.js';
import { GatewayConfig } from '../config.js';
import { API_ERRORS, ApiError } from '../http/api-error.js';
import type { ExternalCaller } from '../http/external/external-api.guard.js';
import { requestInvocationService } from '../invocation-service-request.js';
import { invocationAnswer } from './invocation-answer.js';

const SCOPE_OF_TARGET: Record<string, TokenScope> = {
  BOT: 'bot:invoke',
  FLOW: 'flow:trigger',
  AUTOMATION: 'automation:trigger',
};

/**
 * Reads one invocation from the invocation service's read model (request/reply). The caller
 * must be the token that started the run and carry the scope of the run's target.
 */
@Injectable()
export class GetInvocationHandler {
  constructor(
    @Inject(BUS) private readonly bus: Bus,
    @Inject(GatewayConfig) private readonly config: GatewayConfig,
  ) {}

  async execute(query: { caller: ExternalCaller; invocationId: string }): Promise<unknown> {
    const reply = await this.authorized(query);
    return invocationAnswer(JSON.parse(reply.invocationJson) as Record<string, unknown>);
  }

  /**
   * The run, once the caller may read or change it: 404 `Invocation not found` (unknown, or
   * another organization's), 403 `Token does not match invocation`, 403 `Insufficient token scope`.
   */
  async authorized(query: { caller: ExternalCaller; invocationId: string }): Promise<GetInvocationReply> {
    const request = create(GetInvocationRequestSchema, { orgId: query.caller.orgId, invocationId: query.invocationId });
    const replyBytes = await requestInvocationService(
      this.bus,
      INVOCATION_QUERY_SUBJECTS.GET_INVOCATION,
      toBinary(GetInvocationRequestSchema, request),
      this.config.SERVICE_REQUEST_TIMEOUT_MS,
    );
    const reply = fromBinary(GetInvocationReplySchema, replyBytes);
    if (!reply.found) throw new ApiError(404, API_ERRORS.invocationNotFound);
    if (reply.startedByTokenId !== query.caller.tokenId) throw new ApiError(403, API_ERRORS.tokenMismatch);
    const scope = SCOPE_OF_TARGET[reply.targetType];
    if (!scope || !query.caller.scopes.includes(scope)) throw new ApiError(403, API_ERRORS.insufficientScope);
    return reply;
  }
}
