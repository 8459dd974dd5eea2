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
import { insertJob, jobStatus, moveWaitingJob } from '../jobs/scheduled-jobs.js';
import { outcomeOfSettled, RACE_ATTEMPTS } from './job-change.js';

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
    const { outcome, previousDueAt } = await this.transactions.run(async (tx) => {
      for (let attempt = 1; attempt <= RACE_ATTEMPTS; attempt++) {
        const moved = await moveWaitingJob(tx.manager, request.name, dueAt, at);
        if (moved) {
          tx.emit(jobRescheduledMessage({ ...moved.job, dueAt }, at));
          return { outcome: JobChangeOutcome.CHANGED, previousDueAt: moved.previousDueAt };
        }
        const status = await jobStatus(tx.manager, request.name);
        if (status === null) {
          const job = {
            name: request.name,
            kind,
            invocationId: request.invocationId,
            orgId: request.orgId,
            projectId: request.projectId,
            dueAt,
            correlationId: null,
            causationId: null,
            traceparent: null,
          };
          if (await insertJob(tx.manager, job, 'SCHEDULED', at)) {
            tx.emit(jobRescheduledMessage(job, at));
            return { outcome: JobChangeOutcome.CHANGED, previousDueAt: null };
          }
          continue;
        }
        const settled = outcomeOfSettled(status);
        if (settled !== null) return { outcome: settled, previousDueAt: null };
      }
      throw new Error(`reschedule of job ${request.name} kept racing with its ScheduleJob`);
    });

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
