import { Controller, Inject } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import {
  create,
  fromBinary,
  INVOCATION_REQUEST_SUBJECTS,
  JobChangeOutcome,
  JobKind,
  ModifyAction,
  ModifyInvocationReplySchema,
  ModifyInvocationRequestSchema,
  ModifyOutcome,
  timestampDate,
  toBinary,
  type ModifyInvocationReply,
  type ModifyInvocationRequest,
} from '@runline/contracts';
import { isUnanswered } from '@runline/bus';
import { TransactionRunner } from '@runline/db';
import type { Logger } from '@runline/observability';
import { LOGGER } from '@runline/runtime';
import type { InvocationDocument } from '../lifecycle/invocation.projector.js';
import { cancelled, modifyBlockerOf, notScheduledOutcome, rescheduled, type Transition } from '../lifecycle/run-lifecycle.js';
import { historyAppend } from '../lifecycle/run-history.js';
import { jobRef, type JobRef } from '../lifecycle/scheduler-jobs.js';
import { readDocument, readInvocation } from '../runs/run-reads.repository.js';
import { transition } from '../runs/run-transitions.repository.js';
import { SchedulerClient } from '../runs/scheduler-client.js';

/**
 * Cancels or moves a SCHEDULED async run (PATCH /external-invocations/{id}; the gateway has
 * authorized the caller). The scheduler's job row decides a race with the run starting: it
 * answers whether it changed the job or the job had already fired, and only a changed job is
 * recorded here. A cancelled run never executes; a fired one answers NO_LONGER_SCHEDULED.
 */
@Controller()
export class ChangeScheduledRunHandler {
  constructor(
    private readonly transactions: TransactionRunner,
    private readonly scheduler: SchedulerClient,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  @MessagePattern(INVOCATION_REQUEST_SUBJECTS.MODIFY_INVOCATION)
  async execute(@Payload() data: Uint8Array): Promise<Uint8Array> {
    const reply = await this.modify(fromBinary(ModifyInvocationRequestSchema, data));
    return toBinary(ModifyInvocationReplySchema, reply);
  }

  private async modify(request: ModifyInvocationRequest): Promise<ModifyInvocationReply> {
    const row = await readInvocation(this.transactions.dataSource.manager, request.invocationId);
    const blocker = modifyBlockerOf(row, request.orgId);
    if (blocker === ModifyOutcome.NOT_SCHEDULED) return outcome(await this.notScheduled(row!.id, request));
    if (blocker !== null || !row?.waitingJob) return outcome(blocker ?? ModifyOutcome.NOT_SCHEDULED);
    const job = jobRef(JobKind.START_RUN, row.waitingJob, row);

    try {
      return await this.change(request, row.id, job);
    } catch (error) {
      // The scheduler's job row decides, so without its answer nothing may change here; the
      // caller is told to retry rather than handed an unexpected failure.
      if (!isUnanswered(error)) throw error;
      this.logger.warn({ invocationId: row.id, err: (error as Error).message }, 'the scheduler did not answer a cancel or reschedule');
      return outcome(ModifyOutcome.SCHEDULER_UNAVAILABLE);
    }
  }

  private async change(request: ModifyInvocationRequest, invocationId: string, job: JobRef): Promise<ModifyInvocationReply> {
    let changed: InvocationDocument | null;
    if (request.action === ModifyAction.CANCEL) {
      const result = await this.scheduler.cancel(job);
      if (result === JobChangeOutcome.ALREADY_FIRED) return outcome(ModifyOutcome.NO_LONGER_SCHEDULED);
      // ALREADY_CANCELLED: an earlier cancel reached the scheduler but was not recorded here yet.
      changed = await this.record(invocationId, cancelled(job.name));
    } else if (request.action === ModifyAction.RESCHEDULE && request.runAt) {
      const runAt = timestampDate(request.runAt);
      const result = await this.scheduler.reschedule(job, runAt);
      if (result === JobChangeOutcome.ALREADY_FIRED) return outcome(ModifyOutcome.NO_LONGER_SCHEDULED);
      if (result === JobChangeOutcome.ALREADY_CANCELLED) {
        await this.record(invocationId, cancelled(job.name));
        return outcome(ModifyOutcome.NOT_SCHEDULED);
      }
      changed = await this.record(invocationId, rescheduled(job.name, runAt));
    } else {
      throw new Error(`ModifyInvocation: unsupported action ${request.action} (reschedule needs run_at)`);
    }

    // Null: the run changed between our read and our write (a concurrent PATCH or the cancel
    // backstop recorded the same outcome); answer with what it is now.
    const document = changed ?? (await readDocument(this.transactions.dataSource.manager, invocationId));
    if (!document) throw new Error(`run ${invocationId} has no read model`);
    if (!changed && document.status !== 'CANCELLED' && request.action === ModifyAction.CANCEL) {
      this.logger.warn({ invocationId: invocationId, status: document.status }, 'cancelled job but the run moved on meanwhile');
      return outcome(ModifyOutcome.NO_LONGER_SCHEDULED);
    }
    this.logger.info({ invocationId: invocationId, action: ModifyAction[request.action], scheduledFor: document.scheduledFor }, 'scheduled run modified');
    return create(ModifyInvocationReplySchema, { outcome: ModifyOutcome.MODIFIED, invocationJson: JSON.stringify(document) });
  }

  /** Records the cancel or the new time; null when the run no longer waits for the job. */
  private record(invocationId: string, change: Transition): Promise<InvocationDocument | null> {
    return this.transactions.run((tx) => transition(tx, invocationId, change.expected, change.change, historyAppend(change)));
  }

  /** A run that is not SCHEDULED: did it leave while the request was in flight? */
  private async notScheduled(invocationId: string, request: ModifyInvocationRequest): Promise<ModifyOutcome> {
    if (!request.receivedAt) return ModifyOutcome.NOT_SCHEDULED;
    const document = await readDocument(this.transactions.dataSource.manager, invocationId);
    return notScheduledOutcome(document, timestampDate(request.receivedAt));
  }
}

function outcome(value: ModifyOutcome): ModifyInvocationReply {
  return create(ModifyInvocationReplySchema, { outcome: value });
}
