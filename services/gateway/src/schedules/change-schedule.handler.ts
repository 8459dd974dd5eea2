import { Injectable } from '@nestjs/common';
import { ChangeScheduleReplySchema, ChangeScheduleRequestSchema, create, fromBinary, SCHEDULER_REQUEST_SUBJECTS, ScheduleChange, toBinary } from '@runline/contracts';
import type { ProjectScope } from '../platform/access/project-scope.js';
import { DomainError } from '../platform/errors/domain-error.js';
import { ServiceClient } from '../platform/service-client/service-client.js';
import { SCHEDULE_MESSAGES } from './schedule-messages.js';

/** Pauses or resumes a published schedule (the scheduler keeps the state); answers the schedule. */
@Injectable()
export class ChangeScheduleHandler {
  constructor(private readonly services: ServiceClient) {}

  async execute(scope: Pick<ProjectScope, 'orgId' | 'projectId'>, scheduleId: string, change: 'pause' | 'resume'): Promise<unknown> {
    const request = create(ChangeScheduleRequestSchema, {
      orgId: scope.orgId,
      projectId: scope.projectId,
      scheduleId,
      change: change === 'pause' ? ScheduleChange.PAUSE : ScheduleChange.RESUME,
    });
    const reply = fromBinary(ChangeScheduleReplySchema, await this.services.request('scheduler', SCHEDULER_REQUEST_SUBJECTS.CHANGE_SCHEDULE, toBinary(ChangeScheduleRequestSchema, request)));
    if (!reply.found) throw new DomainError('not-found', SCHEDULE_MESSAGES.notFound);
    return JSON.parse(reply.scheduleJson) as unknown;
  }
}
