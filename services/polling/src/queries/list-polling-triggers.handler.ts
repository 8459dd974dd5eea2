import { Controller, Inject } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import { create, fromBinary, ListPollingTriggersReplySchema, ListPollingTriggersRequestSchema, POLLING_QUERY_SUBJECTS, toBinary } from '@runline/contracts';
import { TransactionRunner } from '@runline/db';
import { SecretBox } from '@runline/runtime';
import { listTriggers } from '../polling/polling-triggers.repository.js';
import { triggerDocument } from '../polling/trigger-document.js';

/** The project's triggers, with authHeader opened: the spec lists it (and calls it sensitive). */
@Controller()
export class ListPollingTriggersHandler {
  constructor(
    private readonly transactions: TransactionRunner,
    @Inject(SecretBox) private readonly secrets: SecretBox,
  ) {}

  @MessagePattern(POLLING_QUERY_SUBJECTS.LIST_POLLING_TRIGGERS)
  async execute(@Payload() data: Uint8Array): Promise<Uint8Array> {
    const request = fromBinary(ListPollingTriggersRequestSchema, data);
    const rows = await listTriggers(this.transactions.dataSource.manager, request.projectId, request.pollKey || null);
    const documents = rows.map((row) => triggerDocument(row, row.sealedAuthHeader === null ? null : this.secrets.open(row.sealedAuthHeader)));
    return toBinary(ListPollingTriggersReplySchema, create(ListPollingTriggersReplySchema, { triggersJson: JSON.stringify(documents) }));
  }
}
