import { Injectable } from '@nestjs/common';
import { create, fromBinary, ListPollingTriggersReplySchema, ListPollingTriggersRequestSchema, POLLING_QUERY_SUBJECTS, toBinary } from '@runline/contracts';
import type { ProjectScope } from '../platform/access/project-scope.js';
import { ServiceClient } from '../platform/service-client/service-client.js';

/** The project's polling triggers, all or the one with a pollKey (the polling service, request/reply). */
@Injectable()
export class GetPollingTriggersHandler {
  constructor(private readonly services: ServiceClient) {}

  async execute(scope: Pick<ProjectScope, 'orgId' | 'projectId'>, pollKey: string | undefined): Promise<{ data: unknown }> {
    const request = create(ListPollingTriggersRequestSchema, { orgId: scope.orgId, projectId: scope.projectId, pollKey: pollKey ?? '' });
    const replyBytes = await this.services.request('polling', POLLING_QUERY_SUBJECTS.LIST_POLLING_TRIGGERS, toBinary(ListPollingTriggersRequestSchema, request));
    const reply = fromBinary(ListPollingTriggersReplySchema, replyBytes);
    return { data: JSON.parse(reply.triggersJson) as unknown };
  }
}
