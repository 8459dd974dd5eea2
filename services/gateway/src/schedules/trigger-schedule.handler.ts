import { Injectable } from '@nestjs/common';
import { create, fromBinary, SCHEDULER_REQUEST_SUBJECTS, ScheduleRunOutcome, toBinary, TriggerScheduleReplySchema, TriggerScheduleRequestSchema } from '@runline/contracts';
import type { ProjectScope } from '../platform/access/project-scope.js';
import { DomainError } from '../platform/errors/domain-error.js';
import { ServiceClient } from '../platform/service-client/service-client.js';
import { SCHEDULE_MESSAGES } from './schedule-messages.js';

/**
 * "Run now": one fire of the schedule with nominal time now, started by the scheduler like any
 * fire; answers the run's id. A run the invocation service did not record: 503 when it asked
 * for a retry, else 422 with its reason (a used-up quota).
 */
@Injectable()
export class TriggerScheduleHandler {
  constructor(private readonly services: ServiceClient) {}

  async execute(scope: Pick<ProjectScope, 'orgId' | 'projectId' | 'configVersion'>, scheduleId: string): Promise<{ invocationId: string }> {
    const request = create(TriggerScheduleRequestSchema, { orgId: scope.orgId, projectId: scope.projectId, scheduleId, configVersion: BigInt(scope.configVersion) });
    const reply = fromBinary(TriggerScheduleReplySchema, await this.services.request('scheduler', SCHEDULER_REQUEST_SUBJECTS.TRIGGER_SCHEDULE, toBinary(TriggerScheduleRequestSchema, request)));
    switch (reply.outcome) {
      case ScheduleRunOutcome.ACCEPTED:
        return { invocationId: reply.invocationId };
      case ScheduleRunOutcome.NOT_FOUND:
        throw new DomainError('not-found', SCHEDULE_MESSAGES.notFound);
      case ScheduleRunOutcome.NOT_STARTED:
        throw new DomainError(reply.unavailable ? 'unavailable' : 'unprocessable', reply.reason);
      default:
        throw new Error(`unexpected trigger outcome ${reply.outcome}`);
    }
  }
}
