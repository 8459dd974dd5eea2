import { CreateOutboxAndInbox1763700000000 } from '@runline/db';
import type { ServiceDefinition } from '@runline/runtime';
import { SchedulerModule } from './scheduler.module.js';

export const schedulerService: ServiceDefinition = {
  name: 'scheduler',
  schema: 'scheduler',
  module: SchedulerModule,
  entities: [],
  migrations: [CreateOutboxAndInbox1763700000000],
};
