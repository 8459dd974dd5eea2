import { Controller } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import {
  BackfillScheduleReplySchema,
  BackfillScheduleRequestSchema,
  create,
  fromBinary,
  SCHEDULER_REQUEST_SUBJECTS,
  ScheduleRunOutcome,
  timestampDate,
  toBinary,
  type BackfillScheduleReply,
} from '@runline/contracts';
import { TransactionRunner } from '@runline/db';
import { fireTimesBetween, SCHEDULE_LIMITS } from '@runline/engine';
import { ScheduleFirer } from './schedule-firer.js';
import { insertFires, lockSchedule } from './schedule-rows.repository.js';

/**
 * A backfill: one fire per fire time of the schedule in [from, to), at most
 * SCHEDULE_LIMITS.maxBackfillFires (more: nothing is recorded). The fires are recorded PENDING,
 * due now, and the firing passes start them oldest first, overlap ignored. A fire time that has
 * fired already keeps its run (a fire starts at most one run); `count` is the number of fire
 * times in the range.
 */
@Controller()
export class BackfillFiresHandler {
  constructor(
    private readonly transactions: TransactionRunner,
    private readonly firer: ScheduleFirer,
  ) {}

  @MessagePattern(SCHEDULER_REQUEST_SUBJECTS.BACKFILL_SCHEDULE)
  async execute(@Payload() data: Uint8Array): Promise<Uint8Array> {
    const request = fromBinary(BackfillScheduleRequestSchema, data);
    if (!request.from || !request.to) throw new Error('BackfillSchedule needs from and to');
    const from = timestampDate(request.from);
    const to = timestampDate(request.to);
    const limit = SCHEDULE_LIMITS.maxBackfillFires;
    const now = new Date();
    const reply = await this.transactions.run(async (tx): Promise<BackfillScheduleReply> => {
      const row = await lockSchedule(tx.manager, request.projectId, request.scheduleId);
      if (!row || row.orgId !== request.orgId) return create(BackfillScheduleReplySchema, { outcome: ScheduleRunOutcome.NOT_FOUND, limit });
      const times = fireTimesBetween(row.definition, from, to, row.anchorAt, limit + 1);
      if (times.length > limit) return create(BackfillScheduleReplySchema, { outcome: ScheduleRunOutcome.TOO_MANY, limit });
      // Due now, a millisecond apart in fire order, so passes take them oldest first.
      await insertFires(
        tx.manager,
        times.map((scheduledTime, index) => ({
          projectId: row.projectId,
          scheduleId: row.scheduleId,
          orgId: row.orgId,
          scheduledTime,
          kind: 'BACKFILL' as const,
          status: 'PENDING' as const,
          dueAt: new Date(now.getTime() + index),
        })),
        now,
      );
      return create(BackfillScheduleReplySchema, { outcome: ScheduleRunOutcome.ACCEPTED, count: times.length, limit });
    });
    if (reply.outcome === ScheduleRunOutcome.ACCEPTED && reply.count > 0) this.firer.offer(now);
    return toBinary(BackfillScheduleReplySchema, reply);
  }
}
