import { Controller, Inject } from '@nestjs/common';
import { MessagePattern, Payload, RpcException } from '@nestjs/microservices';
import {
  create,
  fromBinary,
  JobChangeOutcome,
  RescheduleJobReplySchema,
  RescheduleJobRequestSchema,
  SCHEDULER_REQUEST_SUBJECTS,
  timestampDate,
  toBinary,
} from '@runline/contracts';
import { TransactionRunner } from '@runline/db';
import type { Logger } from '@runline/observability';
import { LOGGER } from '@runline/runtime';
import { JobFirer } from '../jobs/job-firer.js';
import { jobProblem, jobRescheduledMessage, kindName } from '../jobs/job-messages.js';
import { insertJob, moveWaitingJob } from '../jobs/scheduled-jobs.repository.js';
import { decideJobChange, requestedJob } from './job-change.js';

/**
 * Moves a waiting job to a new due time (request/reply). Like a cancel, the row lock decides a
 * race with a firing pass: moved (CHANGED, ScheduledJobRescheduled in the outbox) or fired
 * (ALREADY_FIRED), never both; a cancelled job stays cancelled (ALREADY_CANCELLED). A job whose
 * ScheduleJob has not arrived yet is recorded at the new time, and that ScheduleJob is ignored.
 */
@Controller()
export class RescheduleJobHandler {
  constructor(
    private readonly transactions: TransactionRunner,
    private readonly firer: JobFirer,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  @MessagePattern(SCHEDULER_REQUEST_SUBJECTS.RESCHEDULE_JOB)
  async execute(@Payload() data: Uint8Array): Promise<Uint8Array> {
    const request = fromBinary(RescheduleJobRequestSchema, data);
    const kind = kindName(request.kind);
    const problem =
      jobProblem(request) ??
      (kind === null ? `unknown job kind ${request.kind}` : null) ??
      (request.dueAt === undefined ? 'a new due time is required' : null);
    if (problem !== null || kind === null || request.dueAt === undefined) throw new RpcException(`RescheduleJobRequest refused: ${problem}`);

    const dueAt = timestampDate(request.dueAt);
    const at = new Date();
    const { outcome, changed } = await this.transactions.run((tx) =>
      decideJobChange<{ previousDueAt: Date | null }>(tx.manager, request.name, {
        changeWaiting: async () => {
          const moved = await moveWaitingJob(tx.manager, request.name, dueAt, at);
          if (!moved) return null;
          tx.emit(jobRescheduledMessage({ ...moved.job, dueAt }, at));
          return { previousDueAt: moved.previousDueAt };
        },
        recordMissing: async () => {
          const job = requestedJob(request, kind, dueAt);
          if (!(await insertJob(tx.manager, job, 'SCHEDULED', at))) return null;
          tx.emit(jobRescheduledMessage({ ...job, dueAt }, at));
          return { previousDueAt: null };
        },
      }),
    );
    const previousDueAt = changed?.previousDueAt ?? null;

    if (outcome === JobChangeOutcome.CHANGED) {
      this.logger.info({ job: request.name, invocationId: request.invocationId, dueAt, previousDueAt }, 'job rescheduled');
      this.firer.jobScheduled(dueAt);
      if (previousDueAt !== null) this.firer.jobWithdrawn(previousDueAt);
    } else {
      this.logger.info({ job: request.name, outcome: JobChangeOutcome[outcome] }, 'job not rescheduled');
    }
    return toBinary(RescheduleJobReplySchema, create(RescheduleJobReplySchema, { outcome }));
  }
}
