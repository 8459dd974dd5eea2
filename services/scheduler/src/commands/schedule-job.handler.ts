import { Controller, Inject } from '@nestjs/common';
import { Ctx, EventPattern, Payload } from '@nestjs/microservices';
import type { BusContext } from '@runline/bus';
import {
  EVENT_TYPES,
  SCHEDULER_COMMAND_SUBJECTS,
  timestampDate,
  unpackPayloadAs,
  type Envelope,
} from '@runline/contracts';
import { Inbox, TransactionRunner } from '@runline/db';
import { currentTraceparent, type Logger } from '@runline/observability';
import { InvalidCommandError, LOGGER, readCommandOrTerminate } from '@runline/runtime';
import { JobFirer } from '../jobs/job-firer.js';
import { jobProblem, kindName } from '../jobs/job-messages.js';
import { insertJob, type JobFields } from '../jobs/scheduled-jobs.repository.js';

/** Inbox consumer name of this handler. Persistent: renaming it forgets what was processed. */
const CONSUMER = 'scheduler.schedule-job';

/**
 * Takes ScheduleJob commands off the work queue and records the job as SCHEDULED. Idempotent on
 * the envelope (inbox) and on the job name (`ON CONFLICT DO NOTHING`): a redelivery, or a
 * ScheduleJob that arrives after its job was cancelled or moved, changes nothing. A job due
 * sooner than the armed timer re-arms it at once.
 */
@Controller()
export class ScheduleJobHandler {
  constructor(
    private readonly transactions: TransactionRunner,
    private readonly firer: JobFirer,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  @EventPattern<string>(SCHEDULER_COMMAND_SUBJECTS.SCHEDULE_JOB)
  async handle(@Payload() envelope: Envelope, @Ctx() context: BusContext): Promise<void> {
    const job = await readCommandOrTerminate(envelope, context.getMessage(), this.logger, 'ScheduleJob', jobOf);
    if (job === undefined) return;
    let inserted = false;
    await Inbox.handleOnce(this.transactions.dataSource, CONSUMER, envelope.id, async ({ manager }) => {
      inserted = await insertJob(manager, job, 'SCHEDULED', new Date());
    });
    if (inserted) this.firer.jobScheduled(job.dueAt);
    this.logger.debug({ job: job.name, dueAt: job.dueAt, inserted }, 'ScheduleJob handled');
  }
}

function jobOf(envelope: Envelope): JobFields & { dueAt: Date } {
  const command = unpackPayloadAs(envelope, EVENT_TYPES.SCHEDULE_JOB);
  const kind = kindName(command.kind);
  const problem =
    jobProblem(command) ?? (kind === null ? `unknown job kind ${command.kind}` : null) ?? (command.dueAt === undefined ? 'a job needs a due time' : null);
  if (problem !== null || kind === null || command.dueAt === undefined) {
    throw new InvalidCommandError(`ScheduleJob ${command.name || '(no name)'}: ${problem}`);
  }
  return {
    name: command.name,
    kind,
    invocationId: command.invocationId,
    orgId: command.orgId,
    projectId: command.projectId,
    dueAt: timestampDate(command.dueAt),
    correlationId: envelope.correlationId || envelope.id,
    causationId: envelope.id,
    // This service's span handling the command (a child of the sender's), so later work hangs under it.
    traceparent: currentTraceparent() ?? (envelope.traceparent || null),
  };
}
