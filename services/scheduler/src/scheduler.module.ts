import { Module } from '@nestjs/common';
import { ENVIRONMENT, loadConfig } from '@runline/runtime';
import { CancelJobHandler } from './commands/cancel-job.handler.js';
import { RescheduleJobHandler } from './commands/reschedule-job.handler.js';
import { ScheduleJobHandler } from './commands/schedule-job.handler.js';
import { SchedulerConfig } from './config.js';
import { JobFirer } from './jobs/job-firer.js';
import { JobPruner } from './jobs/job-pruner.js';
import { ApplyScheduleChangeHandler } from './schedules/apply-schedule-change.handler.js';
import { BackfillFiresHandler } from './schedules/backfill-fires.handler.js';
import { ListPublishedSchedulesHandler } from './schedules/list-published-schedules.handler.js';
import { PauseOrResumeScheduleHandler } from './schedules/pause-or-resume-schedule.handler.js';
import { RunScheduleNowHandler } from './schedules/run-schedule-now.handler.js';
import { ScheduleCatalog } from './schedules/schedule-catalog.js';
import { ScheduleCatalogProjector } from './schedules/schedule-catalog.projector.js';
import { ScheduleFirePruner } from './schedules/schedule-fire-pruner.js';
import { ScheduleFirer } from './schedules/schedule-firer.js';
import { ScheduleMetrics } from './schedules/schedule-metrics.js';
import { ScheduleRunEndedHandler } from './schedules/schedule-run-ended.handler.js';
import { ScheduleRunStarts } from './schedules/schedule-run-starts.js';

/**
 * Fires runAt/delaySeconds runs, Wait-node resumes and retry backoffs on time; cancel and
 * reschedule. Owns the Schedule triggers of published automations: fires them, and answers the
 * console's list, pause, resume, run-now and backfill.
 */
@Module({
  controllers: [
    ScheduleJobHandler,
    CancelJobHandler,
    RescheduleJobHandler,
    ApplyScheduleChangeHandler,
    ScheduleCatalogProjector,
    ScheduleRunEndedHandler,
    ListPublishedSchedulesHandler,
    PauseOrResumeScheduleHandler,
    RunScheduleNowHandler,
    BackfillFiresHandler,
  ],
  providers: [
    { provide: SchedulerConfig, inject: [ENVIRONMENT], useFactory: (env: NodeJS.ProcessEnv) => loadConfig(SchedulerConfig, env) },
    JobFirer,
    JobPruner,
    ScheduleMetrics,
    ScheduleRunStarts,
    ScheduleFirer,
    ScheduleCatalog,
    ScheduleFirePruner,
  ],
})
export class SchedulerModule {}
