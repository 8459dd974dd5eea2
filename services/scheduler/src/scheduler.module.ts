import { Module } from '@nestjs/common';
import { ENVIRONMENT, loadConfig } from '@runline/runtime';
import { CancelJobHandler } from './commands/cancel-job.handler.js';
import { RescheduleJobHandler } from './commands/reschedule-job.handler.js';
import { ScheduleJobHandler } from './commands/schedule-job.handler.js';
import { SchedulerConfig } from './config.js';
import { JobFirer } from './jobs/job-firer.js';
import { JobPruner } from './jobs/job-pruner.js';

/** Fires runAt/delaySeconds runs, Wait-node resumes and retry backoffs on time; cancel and reschedule. */
@Module({
  controllers: [ScheduleJobHandler, CancelJobHandler, RescheduleJobHandler],
  providers: [
    { provide: SchedulerConfig, inject: [ENVIRONMENT], useFactory: (env: NodeJS.ProcessEnv) => loadConfig(SchedulerConfig, env) },
    JobFirer,
    JobPruner,
  ],
})
export class SchedulerModule {}
