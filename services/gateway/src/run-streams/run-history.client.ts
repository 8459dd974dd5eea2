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

/** A run's recorded events, who may read it, and (once it ended) the run as GET answers it. */
export interface RecordedRun {
  envelopes: Envelope[];
  startedByTokenId: string;
  targetType: string;
  finalInvocation: Record<string, unknown> | null;
}

/** A run's recorded history and its current state, read from the invocation service (request/reply). */
@Injectable()
export class RunHistoryClient {
  /** `endedInvocation` reads in flight, by organization and run. */
  private readonly endReads = new Map<string, Promise<Record<string, unknown>>>();

  constructor(
    private readonly services: ServiceClient,
    private readonly access: InvocationAccess,
  ) {}

  /** The run's events after `afterSequence`, oldest first, as they went out on the bus. */
  async eventsAfter(orgId: string, invocationId: string, afterSequence: number): Promise<Envelope[]> {
    return (await this.runAfter(orgId, invocationId, afterSequence)).envelopes;
  }

  /**
   * `eventsAfter` with who may read the run (as GET's read says) and, once it ended, the run as
   * GET answers it: a stream's start in one round trip. Not found: `Invocation not found`.
   */
  async runAfter(orgId: string, invocationId: string, afterSequence: number): Promise<RecordedRun> {
    const request = create(ListInvocationEventsRequestSchema, { orgId, invocationId, afterSequence: BigInt(afterSequence) });
    const bytes = await this.services.request('invocation', INVOCATION_QUERY_SUBJECTS.LIST_INVOCATION_EVENTS, toBinary(ListInvocationEventsRequestSchema, request));
    const reply = fromBinary(ListInvocationEventsReplySchema, bytes);
    if (!reply.found) throw new DomainError('not-found', API_ERRORS.invocationNotFound);
    return {
      envelopes: reply.envelopes.map((envelope) => decodeEnvelope(envelope)),
      startedByTokenId: reply.startedByTokenId,
      targetType: reply.targetType,
      finalInvocation: reply.finalInvocationJson ? invocationAnswer(JSON.parse(reply.finalInvocationJson) as Record<string, unknown>) : null,
    };
  }

  /**
   * The run as GET answers it once ended, for a stream's `end`: the streams of one run that ask
   * at the same time share one read. Every such read starts after its stream heard the final
   * event (committed before it went out), so any of them gives the ended run; a read that may
   * have started before the end (`invocation`) is never shared.
   */
  endedInvocation(orgId: string, invocationId: string): Promise<Record<string, unknown>> {
    const key = `${orgId} ${invocationId}`;
    let read = this.endReads.get(key);
    if (!read) {
      read = this.invocation(orgId, invocationId).finally(() => this.endReads.delete(key));
      this.endReads.set(key, read);
    }
    return read;
  }

  /** The run as GET /external-invocations/{id} answers it. */
  async invocation(orgId: string, invocationId: string): Promise<Record<string, unknown>> {
    const reply = await this.access.inOrganization(orgId, invocationId);
    return invocationAnswer(JSON.parse(reply.invocationJson) as Record<string, unknown>);
  }
}
