import { Controller, Inject, type OnApplicationShutdown } from '@nestjs/common';
import { Ctx, EventPattern, Payload } from '@nestjs/microservices';
import { redeliveryDelay, type BusContext, type DeliveredMessage } from '@runline/bus';
import { EVENT_TYPES, isUuid, JobKind, SCHEDULER_EVENT_SUBJECTS, timestampDate, unpackPayloadAs, type Envelope, type ScheduledJobFired } from '@runline/contracts';
import type { Logger } from '@runline/observability';
import { LOGGER } from '@runline/runtime';
import { QUEUEING_AT_ONCE } from '../commands/run-invocation.handler.js';
import { FairStarts } from '../runs/fair-starts.js';
import { RunSlots } from '../runs/run-slots.js';
import { RunStarter } from '../runs/run-starter.js';
import type { JobWait } from '../runs/start-queue.repository.js';

/**
 * A scheduler job came due: start the SCHEDULED run, the retry, or resume the Wait. The
 * scheduler fires a little early (SCHEDULER_FIRE_LEAD_MS, so the event is here in time); each
 * job waits for its own time apart from the others and the run never starts before that time.
 * A start applies only if the run still waits for that very job, so a repeated, late or
 * cancelled job changes nothing.
 *
 * In the fair start order (FairStarts, DESIGN section 13): while few fired starts are held here,
 * each waits here for its time and a slot (the message is settled once its run is claimed, so a
 * crash before that redelivers it). Once the fair queue is in use, or more are held here than
 * there are free run slots (+4), a job is queued in PostgreSQL with its due time, and its
 * message acknowledged once written; freed slots take it in the fair order between projects.
 * So A's thousands of runs due at one moment are not all ahead of B's, and at most a few are
 * held in memory: the rest of a burst waits on the bus while up to QUEUEING_AT_ONCE are written.
 */
@Controller()
export class ScheduledJobFiredHandler implements OnApplicationShutdown {
  private readonly pending = new Set<Promise<void>>();
  private readonly queueing = new RunSlots(QUEUEING_AT_ONCE);

  constructor(
    private readonly starter: RunStarter,
    private readonly fair: FairStarts,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  async onApplicationShutdown(): Promise<void> {
    await Promise.allSettled([...this.pending, this.queueing.drain()]);
  }

  @EventPattern<string>(SCHEDULER_EVENT_SUBJECTS.SCHEDULED_JOB_FIRED)
  async handle(@Payload() envelope: Envelope, @Ctx() context: BusContext): Promise<void> {
    const job = unpackPayloadAs(envelope, EVENT_TYPES.SCHEDULED_JOB_FIRED);
    const message = context.getMessage();
    const wait = jobWaitOf(job);
    // Returning lets the bus hand over the next job; waiting here first is the backpressure.
    // (The queue orders by project: a message without one, never sent so, starts as it comes.)
    if (wait && isUuid(envelope.projectId) && this.fair.shouldQueue(this.pending.size)) {
      await this.queueing.acquire();
      message.settleLater();
      this.queueing.track(this.queueAndSettle(job, wait, envelope.projectId, message));
      return;
    }
    // Handling jobs one after another would make each wait for the one before it.
    message.settleLater();
    const work = this.startAtItsTime(job, wait, message).finally(() => this.pending.delete(work));
    this.pending.add(work);
  }

  /** Acknowledged once the start is in the fair start queue; redelivered after a back-off when it could not be written. */
  private async queueAndSettle(job: ScheduledJobFired, wait: JobWait, projectId: string, message: DeliveredMessage): Promise<void> {
    try {
      await this.fair.queue(job.invocationId, projectId, wait);
    } catch (error) {
      this.logger.warn({ err: error, job: job.name, invocationId: job.invocationId }, 'fired job could not be queued; it is redelivered');
      await message.nak(redeliveryDelay(message.deliveryCount)).catch(() => undefined);
      return;
    }
    await message
      .ack()
      .catch((error: unknown) => this.logger.warn({ err: error, job: job.name }, 'could not acknowledge a queued fired job; its redelivery finds the start queued or done'));
  }

  private async startAtItsTime(job: ScheduledJobFired, wait: JobWait | null, message: DeliveredMessage): Promise<void> {
    try {
      // The run is read while the lead lasts; only the claim waits for the time.
      if (wait) await this.starter.startForJob(job.invocationId, wait, () => message.ack(), wait.dueAt?.getTime() ?? 0);
      else this.logger.warn({ job: job.name, kind: job.kind }, 'scheduler job of an unknown kind ignored');
      // Not claimed (the run no longer waits for this job): nothing to do again.
      await message.ack();
    } catch (error) {
      this.logger.warn({ err: error, job: job.name, invocationId: job.invocationId }, 'fired job could not start its run; it is redelivered');
      await message.nak(redeliveryDelay(message.deliveryCount)).catch(() => undefined);
    }
  }
}

/** What the start of a fired job expects of its run, or null for a kind this version does not know. */
function jobWaitOf(job: ScheduledJobFired): JobWait | null {
  const dueAt = job.dueAt ? timestampDate(job.dueAt) : null;
  switch (job.kind) {
    case JobKind.START_RUN:
      return { status: 'SCHEDULED', waitingJob: job.name, dueAt };
    case JobKind.RETRY_RUN:
      return { status: 'QUEUED', waitingJob: job.name, dueAt };
    case JobKind.RESUME_RUN:
      return { status: 'SUSPENDED', waitingJob: job.name, dueAt };
    default:
      return null;
  }
}
