import { Controller } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import { create, fromBinary, SCHEDULER_REQUEST_SUBJECTS, ScheduleRunOutcome, toBinary, TriggerScheduleReplySchema, TriggerScheduleRequestSchema, type TriggerScheduleReply } from '@runline/contracts';
import { TransactionRunner } from '@runline/db';
import { ScheduleMetrics } from './schedule-metrics.js';
import { fireKeyOf, insertFires, lockSchedule, recordFireOutcome } from './schedule-rows.repository.js';
import { ScheduleRunStarts } from './schedule-run-starts.js';

/**
 * The console's "run now": one fire of the schedule with nominal time now, started at once, a
 * fire like the others (trigger source SCHEDULE, `schedule:<id>`, overlap not applied). The
 * schedule row is held while the run is recorded, as a firing pass holds it.
 */
@Controller()
export class RunScheduleNowHandler {
  constructor(
    private readonly transactions: TransactionRunner,
    private readonly starts: ScheduleRunStarts,
    private readonly metrics: ScheduleMetrics,
  ) {}

  @MessagePattern(SCHEDULER_REQUEST_SUBJECTS.TRIGGER_SCHEDULE)
  async execute(@Payload() data: Uint8Array): Promise<Uint8Array> {
    const request = fromBinary(TriggerScheduleRequestSchema, data);
    const reply = await this.transactions.run(async (tx): Promise<TriggerScheduleReply> => {
      const row = await lockSchedule(tx.manager, request.projectId, request.scheduleId);
      if (!row || row.orgId !== request.orgId) return create(TriggerScheduleReplySchema, { outcome: ScheduleRunOutcome.NOT_FOUND });
      // Two run-nows in one millisecond are two fires: the second takes the next free millisecond.
      let scheduledTime = new Date();
      for (;;) {
        const fire = { projectId: row.projectId, scheduleId: row.scheduleId, orgId: row.orgId, scheduledTime, kind: 'TRIGGER' as const, status: 'STARTED' as const, dueAt: scheduledTime };
        if ((await insertFires(tx.manager, [fire], scheduledTime)).has(fireKeyOf(row.projectId, row.scheduleId, scheduledTime))) break;
        scheduledTime = new Date(scheduledTime.getTime() + 1);
      }
      const answer = await this.starts.start(row, scheduledTime, Math.max(row.configVersion, Number(request.configVersion)));
      this.metrics.started('TRIGGER', 0);
      await recordFireOutcome(tx.manager, {
        projectId: row.projectId,
        scheduleId: row.scheduleId,
        scheduledTime,
        startedAt: new Date(),
        invocationId: answer.invocationId,
        runStatus: answer.invocationId === null ? null : answer.status,
        reason: answer.invocationId === null ? answer.reason : null,
      });
      if (answer.invocationId === null) {
        this.metrics.refused();
        return create(TriggerScheduleReplySchema, { outcome: ScheduleRunOutcome.NOT_STARTED, reason: answer.reason, unavailable: answer.unavailable });
      }
      return create(TriggerScheduleReplySchema, { outcome: ScheduleRunOutcome.ACCEPTED, invocationId: answer.invocationId });
    });
    return toBinary(TriggerScheduleReplySchema, reply);
  }
}
