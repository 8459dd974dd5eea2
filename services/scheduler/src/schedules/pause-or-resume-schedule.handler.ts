import { Controller } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import { ChangeScheduleReplySchema, ChangeScheduleRequestSchema, create, fromBinary, SCHEDULER_REQUEST_SUBJECTS, ScheduleChange, toBinary } from '@runline/contracts';
import { TransactionRunner } from '@runline/db';
import { nextFireTime } from '@runline/engine';
import { scheduleAnswer } from './schedule-answers.js';
import { dueTimeOf, scheduleKey } from './schedule-fire-decisions.js';
import { ScheduleFirer } from './schedule-firer.js';
import { lockSchedule, setPaused } from './schedule-rows.repository.js';

/**
 * Pauses or resumes a schedule. A pause is state, not definition: it survives publishes. Fires
 * due while paused are dropped; a resume fires on from the next fire time after now, catching
 * nothing up. A waiting BUFFER_ONE fire is dropped by a pause.
 */
@Controller()
export class PauseOrResumeScheduleHandler {
  constructor(
    private readonly transactions: TransactionRunner,
    private readonly firer: ScheduleFirer,
  ) {}

  @MessagePattern(SCHEDULER_REQUEST_SUBJECTS.CHANGE_SCHEDULE)
  async execute(@Payload() data: Uint8Array): Promise<Uint8Array> {
    const request = fromBinary(ChangeScheduleRequestSchema, data);
    if (request.change !== ScheduleChange.PAUSE && request.change !== ScheduleChange.RESUME) throw new Error(`ChangeSchedule: unknown change ${request.change}`);
    const paused = request.change === ScheduleChange.PAUSE;
    const now = new Date();
    const answer = await this.transactions.run(async (tx) => {
      const row = await lockSchedule(tx.manager, request.projectId, request.scheduleId);
      if (!row || row.orgId !== request.orgId) return null;
      if (row.paused !== paused) {
        const nextFireAt = paused || !row.definition.enabled ? row.nextFireAt : nextFireTime(row.definition, now, row.anchorAt);
        const dueAt = nextFireAt === null ? null : dueTimeOf(scheduleKey(row.projectId, row.scheduleId), nextFireAt, row.definition);
        await setPaused(tx.manager, row.projectId, row.scheduleId, { paused, nextFireAt, dueAt }, now);
        Object.assign(row, { paused, nextFireAt, dueAt, bufferedFireAt: paused ? null : row.bufferedFireAt });
      }
      return row;
    });
    if (answer?.dueAt) this.firer.offer(answer.dueAt);
    return toBinary(
      ChangeScheduleReplySchema,
      create(ChangeScheduleReplySchema, answer ? { found: true, scheduleJson: JSON.stringify(scheduleAnswer(answer, now)) } : { found: false }),
    );
  }
}
