import { Injectable } from '@nestjs/common';
import {
  create,
  decodeEnvelope,
  fromBinary,
  INVOCATION_QUERY_SUBJECTS,
  ListInvocationEventsReplySchema,
  ListInvocationEventsRequestSchema,
  toBinary,
  type Envelope,
} from '@runline/contracts';
import { DomainError } from '../platform/errors/domain-error.js';
import { API_ERRORS } from '../platform/errors/error-messages.js';
import { InvocationAccess } from '../platform/access/invocation-access.js';
import { invocationAnswer } from '../platform/invocations/invocation-answer.js';
import { ServiceClient } from '../platform/service-client/service-client.js';

/** A run's recorded history and its current state, read from the invocation service (request/reply). */
@Injectable()
export class RunHistoryClient {
  constructor(
    private readonly services: ServiceClient,
    private readonly access: InvocationAccess,
  ) {}

  /** The run's events after `afterSequence`, oldest first, as they went out on the bus. */
  async eventsAfter(orgId: string, invocationId: string, afterSequence: number): Promise<Envelope[]> {
    const request = create(ListInvocationEventsRequestSchema, { orgId, invocationId, afterSequence: BigInt(afterSequence) });
    const bytes = await this.services.request('invocation', INVOCATION_QUERY_SUBJECTS.LIST_INVOCATION_EVENTS, toBinary(ListInvocationEventsRequestSchema, request));
    const reply = fromBinary(ListInvocationEventsReplySchema, bytes);
    if (!reply.found) throw new DomainError('not-found', API_ERRORS.invocationNotFound);
    return reply.envelopes.map((envelope) => decodeEnvelope(envelope));
  }

  /** The run as GET /external-invocations/{id} answers it. */
  async invocation(orgId: string, invocationId: string): Promise<Record<string, unknown>> {
    const reply = await this.access.inOrganization(orgId, invocationId);
    return invocationAnswer(JSON.parse(reply.invocationJson) as Record<string, unknown>);
  }
}
