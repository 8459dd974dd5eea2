import { Injectable } from '@nestjs/common';
import { create, fromBinary, ListWebhookSubscriptionsReplySchema, ListWebhookSubscriptionsRequestSchema, toBinary, WEBHOOK_QUERY_SUBJECTS } from '@runline/contracts';
import { ServiceClient } from '../platform/service-client/service-client.js';
import { webhookSubscriptionView } from './webhook-subscription-view.js';

/** The project's managed subscriptions, newest first, revoked ones included, without credentials. */
@Injectable()
export class ListWebhookSubscriptionsHandler {
  constructor(private readonly services: ServiceClient) {}

  async execute(query: { orgId: string; projectId: string }) {
    const request = create(ListWebhookSubscriptionsRequestSchema, { orgId: query.orgId, projectId: query.projectId });
    const reply = fromBinary(
      ListWebhookSubscriptionsReplySchema,
      await this.services.request('webhook', WEBHOOK_QUERY_SUBJECTS.LIST_WEBHOOK_SUBSCRIPTIONS, toBinary(ListWebhookSubscriptionsRequestSchema, request)),
    );
    return { data: reply.subscriptions.map(webhookSubscriptionView) };
  }
}
