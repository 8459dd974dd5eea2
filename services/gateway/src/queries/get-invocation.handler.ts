import { Injectable } from '@nestjs/common';
import {
  create,
  fromBinary,
  GetInvocationReplySchema,
  GetInvocationRequestSchema,
  INVOCATION_QUERY_SUBJECTS,
  toBinary,
  type GetInvocationReply,
} from '@runline/contracts';
import type { Caller } from '../access/caller.js';
import type { TokenScope } from '../entities/api-token.entity.js';
import { DomainError } from '../errors/domain-error.js';
import { API_ERRORS } from '../errors/error-messages.js';
import { ServiceClient } from '../service-client/service-client.js';
import { invocationAnswer } from './invocation-answer.js';

/** The caller fields the invocation routes check. */
export type InvocationCaller = Pick<Caller, 'tokenId' | 'orgId' | 'scopes'>;

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
  constructor(private readonly services: ServiceClient) {}

  async execute(query: { caller: InvocationCaller; invocationId: string }): Promise<unknown> {
    const reply = await this.authorized(query);
    return invocationAnswer(JSON.parse(reply.invocationJson) as Record<string, unknown>);
  }

  /**
   * The run, once the caller may read or change it: not found `Invocation not found` (unknown,
   * or another organization's), forbidden `Token does not match invocation`, forbidden
   * `Insufficient token scope`.
   */
  async authorized(query: { caller: InvocationCaller; invocationId: string }): Promise<GetInvocationReply> {
    const request = create(GetInvocationRequestSchema, { orgId: query.caller.orgId, invocationId: query.invocationId });
    const replyBytes = await this.services.request('invocation', INVOCATION_QUERY_SUBJECTS.GET_INVOCATION, toBinary(GetInvocationRequestSchema, request));
    const reply = fromBinary(GetInvocationReplySchema, replyBytes);
    if (!reply.found) throw new DomainError('not-found', API_ERRORS.invocationNotFound);
    if (reply.startedByTokenId !== query.caller.tokenId) throw new DomainError('forbidden', API_ERRORS.tokenMismatch);
    const scope = SCOPE_OF_TARGET[reply.targetType];
    if (!scope || !query.caller.scopes.includes(scope)) throw new DomainError('forbidden', API_ERRORS.insufficientScope);
    return reply;
  }
}
