import { CreateOutboxAndInbox1763700000000, IndexInboxProcessedAt1763700000900 } from '@runline/db';
import type { ServiceDefinition } from '@runline/runtime';
import { ScheduledJobEntity } from './entities/scheduled-job.entity.js';
import { CreateScheduledJobs1763700000201 } from './migrations/1763700000201-create-scheduled-jobs.js';
import { IndexEndedJobs1763700000202 } from './migrations/1763700000202-index-ended-jobs.js';
import { SchedulerModule } from './scheduler.module.js';

export const schedulerService: ServiceDefinition = {
  name: 'scheduler',
  schema: 'scheduler',
  module: SchedulerModule,
  entities: [ScheduledJobEntity],
  migrations: [CreateOutboxAndInbox1763700000000, CreateScheduledJobs1763700000201, IndexEndedJobs1763700000202, IndexInboxProcessedAt1763700000900],
};
