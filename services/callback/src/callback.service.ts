import { CreateOutboxAndInbox1763700000000, IndexInboxProcessedAt1763700000900 } from '@runline/db';
import type { ServiceDefinition } from '@runline/runtime';
import { CallbackModule } from './callback.module.js';
import { CreateCallbackDeliveries1763700000301 } from './migrations/1763700000301-create-callback-deliveries.js';

export const callbackService: ServiceDefinition = {
  name: 'callback',
  schema: 'callback',
  module: CallbackModule,
  migrations: [CreateOutboxAndInbox1763700000000, CreateCallbackDeliveries1763700000301, IndexInboxProcessedAt1763700000900],
};
