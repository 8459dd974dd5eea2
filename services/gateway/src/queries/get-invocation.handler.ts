import { Injectable } from '@nestjs/common';
import { InvocationAccess, type InvocationCaller } from '../access/invocation-access.js';
import { invocationAnswer } from './invocation-answer.js';

/** Reads one invocation, once the caller may (InvocationAccess). */
@Injectable()
export class GetInvocationHandler {
  constructor(private readonly access: InvocationAccess) {}

  async execute(query: { caller: InvocationCaller; invocationId: string }): Promise<unknown> {
    const reply = await this.access.authorized(query);
    return invocationAnswer(JSON.parse(reply.invocationJson) as Record<string, unknown>);
  }
}
