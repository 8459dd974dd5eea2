import { CreateOutboxAndInbox1763700000000, IndexInboxProcessedAt1763700000900 } from '@runline/db';
import type { ServiceDefinition } from '@runline/runtime';
import { DeadLetterModule } from './dead-letter.module.js';
import { CreateDeadLetters1763700000501 } from './migrations/1763700000501-create-dead-letters.js';

export const deadLetterService: ServiceDefinition = {
  name: 'dead-letter',
  schema: 'dead_letter',
  module: DeadLetterModule,
  migrations: [CreateOutboxAndInbox1763700000000, CreateDeadLetters1763700000501, IndexInboxProcessedAt1763700000900],
};
