import { Injectable } from '@nestjs/common';
import { InvocationAccess, type InvocationCaller } from '../platform/access/invocation-access.js';
import { invocationAnswer } from '../platform/invocations/invocation-answer.js';

/** Reads one invocation, once the caller may (InvocationAccess): the token that started it, or a member of its organization. */
@Injectable()
export class GetInvocationHandler {
  constructor(private readonly access: InvocationAccess) {}

  async execute(query: { caller: InvocationCaller; invocationId: string }): Promise<unknown> {
    const reply = await this.access.authorized(query);
    return invocationAnswer(JSON.parse(reply.invocationJson) as Record<string, unknown>);
  }

  /** For a member of the organization (the console's run page): any run of it, whoever started it. */
  async executeForMember(query: { orgId: string; invocationId: string }): Promise<unknown> {
    const reply = await this.access.inOrganization(query.orgId, query.invocationId);
    return invocationAnswer(JSON.parse(reply.invocationJson) as Record<string, unknown>);
  }
}
