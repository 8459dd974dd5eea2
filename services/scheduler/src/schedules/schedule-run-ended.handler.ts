import { Controller, Inject } from '@nestjs/common';
import { Ctx, EventPattern, Payload } from '@nestjs/microservices';
import type { BusContext } from '@runline/bus';
import { EVENT_TYPES, SCHEDULER_COMMAND_SUBJECTS, timestampDate, unpackPayloadAs, type Envelope } from '@runline/contracts';
import { TransactionRunner } from '@runline/db';
import type { Logger } from '@runline/observability';
import { InvalidCommandError, LOGGER, readCommandOrTerminate } from '@runline/runtime';
import { isFinalStatus } from './schedule-fire-decisions.js';
import { ScheduleFirer } from './schedule-firer.js';
import { recordRunEnded, type EndedFireRun } from './schedule-rows.repository.js';

/**
 * Learns that a fire's run ended, from the FireRunEnded the invocation service sends for a
 * schedule's runs only: the fire's run status (the console's lastFire), the schedule's
 * previous run (overlap), and a BUFFER_ONE fire waiting behind it, which becomes due at once.
 * Setting a final status is idempotent, so no inbox is needed; a FireRunEnded that comes
 * before its fire was recorded is made up for by the firing pass, which asks the invocation
 * service when unsure.
 */
@Controller()
export class ScheduleRunEndedHandler {
  constructor(
    private readonly transactions: TransactionRunner,
    private readonly firer: ScheduleFirer,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  @EventPattern<string>(SCHEDULER_COMMAND_SUBJECTS.FIRE_RUN_ENDED)
  async handle(@Payload() envelope: Envelope, @Ctx() context: BusContext): Promise<void> {
    const ended = await readCommandOrTerminate(envelope, context.getMessage(), this.logger, 'FireRunEnded', endedFireRunOf);
    if (ended === undefined) return;
    const dueTimes = await this.transactions.run((tx) => recordRunEnded(tx.manager, ended));
    for (const dueAt of dueTimes) this.firer.offer(dueAt);
  }
}

function endedFireRunOf(envelope: Envelope): EndedFireRun {
  const command = unpackPayloadAs(envelope, EVENT_TYPES.FIRE_RUN_ENDED);
  if (envelope.projectId === '' || command.invocationId === '' || command.scheduleId === '' || !command.scheduledTime || !isFinalStatus(command.status)) {
    throw new InvalidCommandError(`FireRunEnded ${command.invocationId || '(no run)'}: needs a project, run, schedule, fire time and final status`);
  }
  return {
    projectId: envelope.projectId,
    scheduleId: command.scheduleId,
    scheduledTime: timestampDate(command.scheduledTime),
    invocationId: command.invocationId,
    status: command.status,
    // The scheduler's clock decides when a BUFFER_ONE fire becomes due, as for its own fires.
    at: new Date(),
  };
}
