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
import type { TokenScope } from '../store/api-token.entity.js';
import { DomainError } from '../errors/domain-error.js';
import { API_ERRORS } from '../errors/error-messages.js';
import { ServiceClient } from '../service-client/service-client.js';
import type { Caller } from './caller.js';

/** The caller fields the invocation routes check. */
export type InvocationCaller = Pick<Caller, 'tokenId' | 'orgId' | 'scopes'>;

const SCOPE_OF_TARGET: Record<string, TokenScope> = {
  BOT: 'bot:invoke',
  FLOW: 'flow:trigger',
  AUTOMATION: 'automation:trigger',
};

/**
 * Who may read or change a run (GET and PATCH of an invocation): the token that started it,
 * carrying the scope of the run's target, or a member of its organization (console routes,
 * whose role the controller checks). The run is read from the invocation service's read model
 * (request/reply).
 */
@Injectable()
export class InvocationAccess {
  constructor(private readonly services: ServiceClient) {}

  /**
   * The run, once the caller may read or change it: not found `Invocation not found` (unknown,
   * or another organization's), forbidden `Token does not match invocation`, forbidden
   * `Insufficient token scope`.
   */
  async authorized(query: { caller: InvocationCaller; invocationId: string }): Promise<GetInvocationReply> {
    const reply = await this.inOrganization(query.caller.orgId, query.invocationId);
    this.check(query.caller, reply);
    return reply;
  }

  /** `authorized`'s checks of a run read elsewhere (a run stream's one read): forbidden as `authorized` says. */
  check(caller: InvocationCaller, run: { startedByTokenId: string; targetType: string }): void {
    if (run.startedByTokenId !== caller.tokenId) throw new DomainError('forbidden', API_ERRORS.tokenMismatch);
    const scope = SCOPE_OF_TARGET[run.targetType];
    if (!scope || !caller.scopes.includes(scope)) throw new DomainError('forbidden', API_ERRORS.insufficientScope);
  }

  /**
   * The run, if it belongs to the organization (any member of it may read it: the console);
   * not found `Invocation not found` otherwise.
   */
  async inOrganization(orgId: string, invocationId: string): Promise<GetInvocationReply> {
    const request = create(GetInvocationRequestSchema, { orgId, invocationId });
    const replyBytes = await this.services.request('invocation', INVOCATION_QUERY_SUBJECTS.GET_INVOCATION, toBinary(GetInvocationRequestSchema, request));
    const reply = fromBinary(GetInvocationReplySchema, replyBytes);
    if (!reply.found) throw new DomainError('not-found', API_ERRORS.invocationNotFound);
    return reply;
  }
}
