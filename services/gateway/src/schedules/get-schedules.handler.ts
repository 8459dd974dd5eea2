import { Injectable } from '@nestjs/common';
import { create, fromBinary, ListSchedulesReplySchema, ListSchedulesRequestSchema, SCHEDULER_QUERY_SUBJECTS, toBinary } from '@runline/contracts';
import type { ProjectScope } from '../platform/access/project-scope.js';
import { ServiceClient } from '../platform/service-client/service-client.js';

/** The project's published schedules with their next fires and latest fire (the scheduler, request/reply). */
@Injectable()
export class GetSchedulesHandler {
  constructor(private readonly services: ServiceClient) {}

  async execute(scope: Pick<ProjectScope, 'orgId' | 'projectId'>): Promise<{ data: unknown }> {
    const request = create(ListSchedulesRequestSchema, { orgId: scope.orgId, projectId: scope.projectId });
    const reply = fromBinary(ListSchedulesReplySchema, await this.services.request('scheduler', SCHEDULER_QUERY_SUBJECTS.LIST_SCHEDULES, toBinary(ListSchedulesRequestSchema, request)));
    return { data: JSON.parse(reply.schedulesJson || '[]') as unknown };
  }
}
