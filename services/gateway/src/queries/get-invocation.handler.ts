import { Inject, Injectable } from '@nestjs/common';
import { BUS, BusNoRespondersError, BusTimeoutError, type Bus } from '@runline/bus';
import {
  create,
  fromBinary,
  GetInvocationReplySchema,
  GetInvocationRequestSchema,
  INVOCATION_QUERY_SUBJECTS,
  toBinary,
} from '@runline/contracts';
import type { TokenScope } from '../entities/api-token.entity.js';
import { GatewayConfig } from '../config.js';
import { API_ERRORS, ApiError } from '../http/api-error.js';
import type { ExternalCaller } from '../http/external/external-api.guard.js';

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
    const request = create(GetInvocationRequestSchema, { orgId: query.caller.orgId, invocationId: query.invocationId });
    let replyBytes: Uint8Array;
    try {
      replyBytes = await this.bus.request(INVOCATION_QUERY_SUBJECTS.GET_INVOCATION, toBinary(GetInvocationRequestSchema, request), {
        timeoutMs: this.config.SERVICE_REQUEST_TIMEOUT_MS,
      });
    } catch (error) {
      if (error instanceof BusTimeoutError || error instanceof BusNoRespondersError) {
        throw new ApiError(503, API_ERRORS.invocationServiceUnavailable);
      }
      throw error;
    }
    const reply = fromBinary(GetInvocationReplySchema, replyBytes);
    if (!reply.found) throw new ApiError(404, API_ERRORS.invocationNotFound);
    if (reply.startedByTokenId !== query.caller.tokenId) throw new ApiError(403, API_ERRORS.tokenMismatch);
    const scope = SCOPE_OF_TARGET[reply.targetType];
    if (!scope || !query.caller.scopes.includes(scope)) throw new ApiError(403, API_ERRORS.insufficientScope);
    return JSON.parse(reply.invocationJson) as unknown;
  }
}
