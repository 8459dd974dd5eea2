import { CreateOutboxAndInbox1763700000000, IndexInboxProcessedAt1763700000900 } from '@runline/db';
import type { ServiceDefinition } from '@runline/runtime';
import { CreatePollingTriggers1763700000401 } from './migrations/1763700000401-create-polling-triggers.js';
import { CreateProjectCopies1763700000410 } from './migrations/1763700000410-create-project-copies.js';
import { AddTriggerRunTarget1763700000420 } from './migrations/1763700000420-add-trigger-run-target.js';
import { PollingModule } from './polling.module.js';

export const pollingService: ServiceDefinition = {
  name: 'polling',
  schema: 'polling',
  module: PollingModule,
  migrations: [CreateOutboxAndInbox1763700000000, CreatePollingTriggers1763700000401, CreateProjectCopies1763700000410, AddTriggerRunTarget1763700000420, IndexInboxProcessedAt1763700000900],
};
