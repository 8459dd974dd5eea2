import { CreateOutboxAndInbox1763700000000 } from '@runline/db';
import type { ServiceDefinition } from '@runline/runtime';
import { CallbackModule } from './callback.module.js';

export const callbackService: ServiceDefinition = {
  name: 'callback',
  schema: 'callback',
  module: CallbackModule,
  entities: [],
  migrations: [CreateOutboxAndInbox1763700000000],
};
