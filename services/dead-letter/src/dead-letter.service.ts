import { CreateOutboxAndInbox1763700000000 } from '@runline/db';
import type { ServiceDefinition } from '@runline/runtime';
import { DeadLetterModule } from './dead-letter.module.js';

export const deadLetterService: ServiceDefinition = {
  name: 'dead-letter',
  schema: 'dead_letter',
  module: DeadLetterModule,
  entities: [],
  migrations: [CreateOutboxAndInbox1763700000000],
};
