import { Controller } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import { create, fromBinary, ListSchedulesReplySchema, ListSchedulesRequestSchema, SCHEDULER_QUERY_SUBJECTS, toBinary } from '@runline/contracts';
import { TransactionRunner } from '@runline/db';
import { scheduleAnswer } from './schedule-answers.js';
import { isFinalStatus } from './schedule-fire-decisions.js';
import { projectSchedules } from './schedule-rows.repository.js';
import { ScheduleRunStarts } from './schedule-run-starts.js';

/**
 * The console's list of a project's published schedules. A latest run not final as last heard
 * is asked of the invocation service, so `lastFire.status` is current even when the run's end
 * event came before its fire was recorded.
 */
@Controller()
export class ListPublishedSchedulesHandler {
  constructor(
    private readonly transactions: TransactionRunner,
    private readonly starts: ScheduleRunStarts,
  ) {}

  @MessagePattern(SCHEDULER_QUERY_SUBJECTS.LIST_SCHEDULES)
  async execute(@Payload() data: Uint8Array): Promise<Uint8Array> {
    const request = fromBinary(ListSchedulesRequestSchema, data);
    const rows = (await projectSchedules(this.transactions.dataSource.manager, request.projectId)).filter((row) => row.orgId === request.orgId);
    await Promise.all(
      rows
        .filter((row) => row.lastInvocationId !== null && !isFinalStatus(row.lastStatus))
        .map(async (row) => {
          row.lastStatus = (await this.starts.runStatus(row.orgId, row.lastInvocationId!)) ?? row.lastStatus;
        }),
    );
    const now = new Date();
    return toBinary(ListSchedulesReplySchema, create(ListSchedulesReplySchema, { schedulesJson: JSON.stringify(rows.map((row) => scheduleAnswer(row, now))) }));
  }
}
