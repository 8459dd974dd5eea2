import { Controller } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import { create, fromBinary, ListInboundHooksReplySchema, ListInboundHooksRequestSchema, toBinary, WEBHOOK_QUERY_SUBJECTS } from '@runline/contracts';
import { TransactionRunner } from '@runline/db';
import { inboundHookMessage } from '../hooks/inbound-hook.message.js';
import { hooksOfProject } from '../hooks/inbound-hooks.repository.js';

/** The project's hooks, newest first, without their secrets. */
@Controller()
export class ListInboundHooksHandler {
  constructor(private readonly transactions: TransactionRunner) {}

  @MessagePattern(WEBHOOK_QUERY_SUBJECTS.LIST_INBOUND_HOOKS)
  async execute(@Payload() data: Uint8Array): Promise<Uint8Array> {
    const request = fromBinary(ListInboundHooksRequestSchema, data);
    const rows = await hooksOfProject(this.transactions.dataSource.manager, request.projectId);
    return toBinary(ListInboundHooksReplySchema, create(ListInboundHooksReplySchema, { hooks: rows.map(inboundHookMessage) }));
  }
}
