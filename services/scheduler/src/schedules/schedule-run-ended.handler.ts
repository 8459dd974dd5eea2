import { Controller } from '@nestjs/common';
import { EventPattern, Payload } from '@nestjs/microservices';
import { EVENT_TYPES, INVOCATION_EVENT_SUBJECTS, type Envelope } from '@runline/contracts';
import { TransactionRunner } from '@runline/db';
import { ScheduleFirer } from './schedule-firer.js';
import { recordRunEnded } from './schedule-rows.repository.js';

/** The final status each run-ending event stands for. */
const FINAL_STATUS_OF: Readonly<Record<string, string>> = {
  [EVENT_TYPES.INVOCATION_SUCCEEDED]: 'SUCCEEDED',
  [EVENT_TYPES.INVOCATION_FAILED]: 'FAILED',
  [EVENT_TYPES.INVOCATION_TIMED_OUT]: 'TIMEOUT',
  [EVENT_TYPES.INVOCATION_CANCELLED]: 'CANCELLED',
};

/**
 * Learns that runs ended, from the invocation service's events: the fire's run status (the
 * console's lastFire), the schedule's previous run (overlap), and a BUFFER_ONE fire waiting
 * behind it, which becomes due at once. Most runs are no fire's and match no row. Setting a
 * final status is idempotent, so no inbox is needed; an event that comes before its fire was
 * recorded is made up for by the firing pass, which asks the invocation service when unsure.
 */
@Controller()
export class ScheduleRunEndedHandler {
  constructor(
    private readonly transactions: TransactionRunner,
    private readonly firer: ScheduleFirer,
  ) {}

  @EventPattern([
    INVOCATION_EVENT_SUBJECTS.INVOCATION_SUCCEEDED,
    INVOCATION_EVENT_SUBJECTS.INVOCATION_FAILED,
    INVOCATION_EVENT_SUBJECTS.INVOCATION_TIMED_OUT,
    INVOCATION_EVENT_SUBJECTS.INVOCATION_CANCELLED,
  ])
  async handle(@Payload() envelope: Envelope): Promise<void> {
    const status = FINAL_STATUS_OF[envelope.type];
    if (status === undefined || envelope.invocationId === '') return;
    const dueTimes = await this.transactions.run((tx) => recordRunEnded(tx.manager, envelope.invocationId, status, new Date()));
    for (const dueAt of dueTimes) this.firer.offer(dueAt);
  }
}
