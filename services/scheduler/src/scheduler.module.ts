import { Module } from '@nestjs/common';

/** Fires runAt/delaySeconds runs, Wait-node resumes and retry backoffs on time; cancel and reschedule. */
@Module({})
export class SchedulerModule {}
