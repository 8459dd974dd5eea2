import { Controller } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import { create, DeletePollingTriggerReplySchema, DeletePollingTriggerRequestSchema, fromBinary, POLLING_REQUEST_SUBJECTS, toBinary } from '@runline/contracts';
import { TransactionRunner } from '@runline/db';
import { deleteTrigger } from '../polling/polling-triggers.repository.js';

/** Stops polling: the row goes; a poll in flight completes without writing back. */
@Controller()
export class DeletePollingTriggerHandler {
  constructor(private readonly transactions: TransactionRunner) {}

  @MessagePattern(POLLING_REQUEST_SUBJECTS.DELETE_POLLING_TRIGGER)
  async execute(@Payload() data: Uint8Array): Promise<Uint8Array> {
    const request = fromBinary(DeletePollingTriggerRequestSchema, data);
    const found = await this.transactions.run((tx) => deleteTrigger(tx.manager, request.projectId, request.pollKey));
    return toBinary(DeletePollingTriggerReplySchema, create(DeletePollingTriggerReplySchema, { found }));
  }
}
