import { Controller, Inject, type OnApplicationShutdown } from '@nestjs/common';
import { Ctx, EventPattern, Payload } from '@nestjs/microservices';
import { redeliveryDelay, type BusContext, type DeliveredMessage } from '@runline/bus';
import { EVENT_TYPES, JobKind, SCHEDULER_EVENT_SUBJECTS, timestampDate, unpackPayloadAs, type Envelope, type ScheduledJobFired } from '@runline/contracts';
import type { Logger } from '@runline/observability';
import { LOGGER } from '@runline/runtime';
import { RunStarter } from '../runs/run-starter.js';

/**
 * A scheduler job came due: start the SCHEDULED run, the retry, or resume the Wait. The
 * scheduler fires a little early (SCHEDULER_FIRE_LEAD_MS, so the event is here in time); each
 * job waits for its own time apart from the others (the message is settled once its run is
 * claimed, so a crash before that redelivers it) and the run never starts before that time.
 * A start applies only if the run still waits for that very job, so a repeated, late or
 * cancelled job changes nothing.
 */
@Controller()
export class ScheduledJobFiredHandler implements OnApplicationShutdown {
  private readonly pending = new Set<Promise<void>>();

  constructor(
    private readonly starter: RunStarter,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  async onApplicationShutdown(): Promise<void> {
    await Promise.allSettled([...this.pending]);
  }

  @EventPattern<string>(SCHEDULER_EVENT_SUBJECTS.SCHEDULED_JOB_FIRED)
  handle(@Payload() envelope: Envelope, @Ctx() context: BusContext): void {
    const job = unpackPayloadAs(envelope, EVENT_TYPES.SCHEDULED_JOB_FIRED);
    const message = context.getMessage();
    // Handling jobs one after another would make each wait for the one before it.
    message.settleLater();
    const work = this.startAtItsTime(job, message).finally(() => this.pending.delete(work));
    this.pending.add(work);
  }

  private async startAtItsTime(job: ScheduledJobFired, message: DeliveredMessage): Promise<void> {
    try {
      // The run is read while the lead lasts; only the claim waits for the time.
      const dueAt = job.dueAt ? timestampDate(job.dueAt).getTime() : 0;
      const acknowledge = () => message.ack();
      switch (job.kind) {
        case JobKind.START_RUN:
          await this.starter.start(job.invocationId, { status: 'SCHEDULED', waitingJob: job.name }, acknowledge, dueAt);
          break;
        case JobKind.RETRY_RUN:
          await this.starter.start(job.invocationId, { status: 'QUEUED', waitingJob: job.name }, acknowledge, dueAt);
          break;
        case JobKind.RESUME_RUN:
          await this.starter.resume(job.invocationId, job.name, acknowledge, dueAt);
          break;
        default:
          this.logger.warn({ job: job.name, kind: job.kind }, 'scheduler job of an unknown kind ignored');
      }
      // Not claimed (the run no longer waits for this job): nothing to do again.
      await message.ack();
    } catch (error) {
      this.logger.warn({ err: error, job: job.name, invocationId: job.invocationId }, 'fired job could not start its run; it is redelivered');
      await message.nak(redeliveryDelay(message.deliveryCount)).catch(() => undefined);
    }
  }
}
