import { Controller, Inject } from '@nestjs/common';
import { MessagePattern, Payload, RpcException } from '@nestjs/microservices';
import {
  CancelJobReplySchema,
  CancelJobRequestSchema,
  create,
  fromBinary,
  JobChangeOutcome,
  SCHEDULER_REQUEST_SUBJECTS,
  toBinary,
} from '@runline/contracts';
import { TransactionRunner } from '@runline/db';
import type { Logger } from '@runline/observability';
import { LOGGER } from '@runline/runtime';
import { JobFirer } from '../jobs/job-firer.js';
import { jobCancelledMessage, jobProblem, kindName } from '../jobs/job-messages.js';
import { cancelWaitingJob, insertJob } from '../jobs/scheduled-jobs.repository.js';
import { decideJobChange, requestedJob } from './job-change.js';

/**
 * Cancels a waiting job (request/reply). The row lock decides a race with a firing pass: the
 * job is either cancelled (CHANGED, ScheduledJobCancelled in the outbox) or fired
 * (ALREADY_FIRED), never both. A job whose ScheduleJob has not arrived yet is recorded as a
 * cancelled tombstone (CHANGED), so that ScheduleJob is ignored when it comes.
 */
@Controller()
export class CancelJobHandler {
  constructor(
    private readonly transactions: TransactionRunner,
    private readonly firer: JobFirer,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  @MessagePattern(SCHEDULER_REQUEST_SUBJECTS.CANCEL_JOB)
  async execute(@Payload() data: Uint8Array): Promise<Uint8Array> {
    const request = fromBinary(CancelJobRequestSchema, data);
    const kind = kindName(request.kind);
    const problem = jobProblem(request) ?? (kind === null ? `unknown job kind ${request.kind}` : null);
    if (problem !== null || kind === null) throw new RpcException(`CancelJobRequest refused: ${problem}`);

    const at = new Date();
    const { outcome, changed } = await this.transactions.run((tx) =>
      decideJobChange(tx.manager, request.name, {
        changeWaiting: async () => {
          const cancelled = await cancelWaitingJob(tx.manager, request.name, at);
          if (cancelled) tx.emit(jobCancelledMessage(cancelled, at));
          return cancelled;
        },
        recordMissing: async () => {
          const tombstone = requestedJob(request, kind, null);
          if (!(await insertJob(tx.manager, tombstone, 'CANCELLED', at))) return null;
          tx.emit(jobCancelledMessage(tombstone, at));
          return tombstone;
        },
      }),
    );
    const dueAt = changed?.dueAt ?? null;

    if (outcome === JobChangeOutcome.CHANGED) {
      this.logger.info({ job: request.name, invocationId: request.invocationId, tombstone: dueAt === null }, 'job cancelled');
      if (dueAt !== null) this.firer.jobWithdrawn(dueAt);
    } else {
      this.logger.info({ job: request.name, outcome: JobChangeOutcome[outcome] }, 'job not cancelled');
    }
    return toBinary(CancelJobReplySchema, create(CancelJobReplySchema, { outcome }));
  }
}
