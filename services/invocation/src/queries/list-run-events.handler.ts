import { Controller } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import { DataSource } from 'typeorm';
import {
  create,
  encodeEnvelope,
  fromBinary,
  INVOCATION_QUERY_SUBJECTS,
  isUuid,
  ListInvocationEventsReplySchema,
  ListInvocationEventsRequestSchema,
  toBinary,
} from '@runline/contracts';
import { invocationEnvelope } from '../lifecycle/invocation-event.codec.js';
import { findRunEvents } from './run-events.repository.js';

/**
 * A run's recorded events after a sequence, as they went out on the bus (the same envelopes,
 * ids and sequences): the gateway's run streams replay them after Last-Event-ID and fill gaps
 * in what they heard live. Scoped to the caller's organization like GET; with who started the
 * run (the stream checks its caller with it) and, once it ended, the run as GET reads it.
 */
@Controller()
export class ListRunEventsHandler {
  constructor(private readonly dataSource: DataSource) {}

  @MessagePattern(INVOCATION_QUERY_SUBJECTS.LIST_INVOCATION_EVENTS)
  async execute(@Payload() data: Uint8Array): Promise<Uint8Array> {
    const request = fromBinary(ListInvocationEventsRequestSchema, data);
    const run = isUuid(request.invocationId)
      ? await findRunEvents(this.dataSource, request.invocationId, request.orgId, Number(request.afterSequence))
      : null;
    const reply = run
      ? create(ListInvocationEventsReplySchema, {
          found: true,
          envelopes: run.events.map((event) => encodeEnvelope(invocationEnvelope(event))),
          startedByTokenId: run.startedByTokenId ?? '',
          targetType: run.targetType,
          finalInvocationJson: run.finalDocument ? JSON.stringify(run.finalDocument) : '',
        })
      : create(ListInvocationEventsReplySchema, { found: false });
    return toBinary(ListInvocationEventsReplySchema, reply);
  }
}
