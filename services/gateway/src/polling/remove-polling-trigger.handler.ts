import { Injectable } from '@nestjs/common';
import { create, DeletePollingTriggerReplySchema, DeletePollingTriggerRequestSchema, fromBinary, POLLING_REQUEST_SUBJECTS, toBinary } from '@runline/contracts';
import type { ProjectScope } from '../platform/access/project-scope.js';
import { DomainError } from '../platform/errors/domain-error.js';
import { ServiceClient } from '../platform/service-client/service-client.js';

export const POLLING_NOT_FOUND = 'Polling state not found';

/** Stops polling: removes the trigger with that pollKey (the polling service, request/reply). */
@Injectable()
export class RemovePollingTriggerHandler {
  constructor(private readonly services: ServiceClient) {}

  async execute(scope: Pick<ProjectScope, 'orgId' | 'projectId'>, pollKey: string | undefined): Promise<{ success: true }> {
    if (typeof pollKey !== 'string' || pollKey === '') throw new DomainError('invalid', 'pollKey is required');
    const request = create(DeletePollingTriggerRequestSchema, { orgId: scope.orgId, projectId: scope.projectId, pollKey });
    const replyBytes = await this.services.request('polling', POLLING_REQUEST_SUBJECTS.DELETE_POLLING_TRIGGER, toBinary(DeletePollingTriggerRequestSchema, request));
    const reply = fromBinary(DeletePollingTriggerReplySchema, replyBytes);
    if (!reply.found) throw new DomainError('not-found', POLLING_NOT_FOUND);
    return { success: true };
  }
}
