import { CreateOutboxAndInbox1763700000000, IndexInboxProcessedAt1763700000900 } from '@runline/db';
import type { ServiceDefinition } from '@runline/runtime';
import { CreateScheduledJobs1763700000201 } from './migrations/1763700000201-create-scheduled-jobs.js';
import { IndexEndedJobs1763700000202 } from './migrations/1763700000202-index-ended-jobs.js';
import { CreateSchedules1763700000210 } from './migrations/1763700000210-create-schedules.js';
import { SchedulerModule } from './scheduler.module.js';

export const schedulerService: ServiceDefinition = {
  name: 'scheduler',
  schema: 'scheduler',
  module: SchedulerModule,
  migrations: [CreateOutboxAndInbox1763700000000, CreateScheduledJobs1763700000201, IndexEndedJobs1763700000202, CreateSchedules1763700000210, IndexInboxProcessedAt1763700000900],
};
