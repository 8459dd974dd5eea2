import { CreateOutboxAndInbox1763700000000, IndexInboxProcessedAt1763700000900 } from '@runline/db';
import type { ServiceDefinition } from '@runline/runtime';
import { CreateInboundHooks1763700000701 } from './migrations/1763700000701-create-inbound-hooks.js';
import { CreateWebhookSubscriptions1763700000702 } from './migrations/1763700000702-create-webhook-subscriptions.js';
import { DropHookDeliveries1763700000703 } from './migrations/1763700000703-drop-hook-deliveries.js';
import { WebhookModule } from './webhook.module.js';

export const webhookService: ServiceDefinition = {
  name: 'webhook',
  schema: 'webhook',
  module: WebhookModule,
  migrations: [CreateOutboxAndInbox1763700000000, CreateInboundHooks1763700000701, IndexInboxProcessedAt1763700000900, CreateWebhookSubscriptions1763700000702, DropHookDeliveries1763700000703],
};
