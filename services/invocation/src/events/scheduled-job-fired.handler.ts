import { setTimeout as sleep } from 'node:timers/promises';
import { Controller, Inject } from '@nestjs/common';
import { Ctx, EventPattern, Payload } from '@nestjs/microservices';
import type { BusContext } from '@runline/bus';
import { EVENT_TYPES, JobKind, SCHEDULER_EVENT_SUBJECTS, timestampDate, unpackPayloadAs, type Envelope } from '@runline/contracts';
import type { Logger } from '@runline/observability';
import { LOGGER } from '@runline/runtime';
import { RunStarter } from '../runs/run-starter.js';

/**
 * A scheduler job came due: start the SCHEDULED run, the retry, or resume the Wait. The
 * scheduler may fire a little early (its lead, so the message is here in time); the run never
 * starts before the job's time. Each start applies only if the run still waits for that very
 * job, so a repeated, late or cancelled-and-moved job changes nothing.
 */
@Controller()
export class ScheduledJobFiredHandler {
  constructor(
    private readonly starter: RunStarter,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  @EventPattern<string>(SCHEDULER_EVENT_SUBJECTS.SCHEDULED_JOB_FIRED)
  async handle(@Payload() envelope: Envelope, @Ctx() context: BusContext): Promise<void> {
    const job = unpackPayloadAs(envelope, EVENT_TYPES.SCHEDULED_JOB_FIRED);
    const early = job.dueAt ? timestampDate(job.dueAt).getTime() - Date.now() : 0;
    if (early > 0) await sleep(early);
    const acknowledge = () => context.getMessage().ack();
    switch (job.kind) {
      case JobKind.START_RUN:
        return this.starter.start(job.invocationId, { status: 'SCHEDULED', waitingJob: job.name }, acknowledge);
      case JobKind.RETRY_RUN:
        return this.starter.start(job.invocationId, { status: 'QUEUED', waitingJob: job.name }, acknowledge);
      case JobKind.RESUME_RUN:
        return this.starter.resume(job.invocationId, job.name, acknowledge);
      default:
        this.logger.warn({ job: job.name, kind: job.kind }, 'scheduler job of an unknown kind ignored');
    }
  }
}
