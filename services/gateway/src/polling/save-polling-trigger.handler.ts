import { Injectable } from '@nestjs/common';
import { create, fromBinary, POLLING_REQUEST_SUBJECTS, RegisterPollingTriggerReplySchema, RegisterPollingTriggerRequestSchema, toBinary } from '@runline/contracts';
import type { ProjectScope } from '../platform/access/project-scope.js';
import { DomainError } from '../platform/errors/domain-error.js';
import { ServiceClient } from '../platform/service-client/service-client.js';

/** A polling trigger as registered; the polling service applies the defaults of fields left out. */
export interface PollingTriggerFields {
  source: string;
  pollKey: string;
  pollEndpoint: string;
  dedupeField?: string;
  authHeader?: string;
  intervalMs?: number;
}

/**
 * Registers a polling trigger, or updates the one with that pollKey (the polling service decides,
 * request/reply). Called by the token route (chatbot projects) and the console (either type).
 */
@Injectable()
export class SavePollingTriggerHandler {
  constructor(private readonly services: ServiceClient) {}

  async execute(scope: Pick<ProjectScope, 'orgId' | 'projectId' | 'projectType' | 'configVersion'>, trigger: PollingTriggerFields): Promise<{ data: unknown }> {
    const request = create(RegisterPollingTriggerRequestSchema, {
      orgId: scope.orgId,
      projectId: scope.projectId,
      configVersion: BigInt(scope.configVersion),
      // What the polled items run: the chatbot's flow or the automation's workflow.
      projectType: scope.projectType,
      source: trigger.source,
      pollKey: trigger.pollKey,
      pollEndpoint: trigger.pollEndpoint,
      dedupeField: trigger.dedupeField ?? '',
      authHeader: trigger.authHeader ?? '',
      intervalMs: trigger.intervalMs ?? 0,
    });
    const replyBytes = await this.services.request('polling', POLLING_REQUEST_SUBJECTS.REGISTER_POLLING_TRIGGER, toBinary(RegisterPollingTriggerRequestSchema, request));
    const reply = fromBinary(RegisterPollingTriggerReplySchema, replyBytes);
    if (reply.invalidReason) throw new DomainError('invalid', reply.invalidReason);
    return { data: JSON.parse(reply.triggerJson) as unknown };
  }
}
