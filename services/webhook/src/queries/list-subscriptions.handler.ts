import { Controller } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import { create, fromBinary, ListWebhookSubscriptionsReplySchema, ListWebhookSubscriptionsRequestSchema, toBinary, WEBHOOK_QUERY_SUBJECTS } from '@runline/contracts';
import { TransactionRunner } from '@runline/db';
import { webhookSubscriptionMessage } from '../subscriptions/webhook-subscription.message.js';
import { subscriptionsOfProject } from '../subscriptions/webhook-subscriptions.repository.js';

/** The project's subscriptions, newest first, without credentials or secrets. */
@Controller()
export class ListSubscriptionsHandler {
  constructor(private readonly transactions: TransactionRunner) {}

  @MessagePattern(WEBHOOK_QUERY_SUBJECTS.LIST_WEBHOOK_SUBSCRIPTIONS)
  async execute(@Payload() data: Uint8Array): Promise<Uint8Array> {
    const request = fromBinary(ListWebhookSubscriptionsRequestSchema, data);
    const rows = await subscriptionsOfProject(this.transactions.dataSource.manager, request.projectId);
    return toBinary(ListWebhookSubscriptionsReplySchema, create(ListWebhookSubscriptionsReplySchema, { subscriptions: rows.map(webhookSubscriptionMessage) }));
  }
}
