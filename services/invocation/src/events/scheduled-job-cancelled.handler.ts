import { Controller } from '@nestjs/common';
import { EventPattern, Payload } from '@nestjs/microservices';
import { EVENT_TYPES, JobKind, SCHEDULER_EVENT_SUBJECTS, unpackPayloadAs, type Envelope } from '@runline/contracts';
import { TransactionRunner } from '@runline/db';
import { cancelled } from '../lifecycle/run-lifecycle.js';
import { historyAppend } from '../lifecycle/run-history.js';
import { transition } from '../runs/run-transitions.repository.js';

/**
 * The backstop of a cancel: ModifyInvocation records the cancel itself as soon as the scheduler
 * answers, but if this service stopped between that answer and its own commit, the run would
 * stay SCHEDULED for ever with a cancelled job. The scheduler's event settles it; when the cancel
 * is already recorded, nothing changes.
 */
@Controller()
export class ScheduledJobCancelledHandler {
  constructor(private readonly transactions: TransactionRunner) {}

  @EventPattern<string>(SCHEDULER_EVENT_SUBJECTS.SCHEDULED_JOB_CANCELLED)
  async handle(@Payload() envelope: Envelope): Promise<void> {
    const job = unpackPayloadAs(envelope, EVENT_TYPES.SCHEDULED_JOB_CANCELLED);
    if (job.kind !== JobKind.START_RUN) return;
    const change = cancelled(job.name);
    await this.transactions.run((tx) => transition(tx, job.invocationId, change.expected, change.change, historyAppend(change)));
  }
}
