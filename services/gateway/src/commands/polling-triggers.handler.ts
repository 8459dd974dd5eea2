import { Inject, Injectable } from '@nestjs/common';
import { BUS, type Bus } from '@runline/bus';
import {
  create,
  DeletePollingTriggerReplySchema,
  DeletePollingTriggerRequestSchema,
  fromBinary,
  ListPollingTriggersReplySchema,
  ListPollingTriggersRequestSchema,
  POLLING_QUERY_SUBJECTS,
  POLLING_REQUEST_SUBJECTS,
  RegisterPollingTriggerReplySchema,
  RegisterPollingTriggerRequestSchema,
  toBinary,
} from '@runline/contracts';
import { GatewayConfig } from '../config.js';
import { ApiError } from '../http/api-error.js';
import type { ExternalCaller } from '../http/external/external-api.guard.js';
import type { RegisterPollingBody } from '../http/external/polling-bodies.dto.js';
import { requestService, SERVICE_UNAVAILABLE } from '../http/external/polling-requests.js';

export const POLLING_NOT_FOUND = 'Polling state not found';

/** The polling routes, answered by the polling service (request/reply). */
@Injectable()
export class PollingTriggersHandler {
  constructor(
    @Inject(BUS) private readonly bus: Bus,
    @Inject(GatewayConfig) private readonly config: GatewayConfig,
  ) {}

  async register(caller: ExternalCaller, body: RegisterPollingBody): Promise<{ data: unknown }> {
    const request = create(RegisterPollingTriggerRequestSchema, {
      orgId: caller.orgId,
      projectId: caller.projectId,
      configVersion: BigInt(caller.configVersion),
      source: body.source,
      pollKey: body.pollKey,
      pollEndpoint: body.pollEndpoint,
      dedupeField: body.dedupeField ?? '',
      authHeader: body.authHeader ?? '',
      intervalMs: body.intervalMs ?? 0,
    });
    const reply = fromBinary(
      RegisterPollingTriggerReplySchema,
      await this.ask(POLLING_REQUEST_SUBJECTS.REGISTER_POLLING_TRIGGER, toBinary(RegisterPollingTriggerRequestSchema, request)),
    );
    if (reply.invalidReason) throw new ApiError(400, reply.invalidReason);
    return { data: JSON.parse(reply.triggerJson) as unknown };
  }

  async list(caller: ExternalCaller, pollKey: string | undefined): Promise<{ data: unknown }> {
    const request = create(ListPollingTriggersRequestSchema, { orgId: caller.orgId, projectId: caller.projectId, pollKey: pollKey ?? '' });
    const reply = fromBinary(ListPollingTriggersReplySchema, await this.ask(POLLING_QUERY_SUBJECTS.LIST_POLLING_TRIGGERS, toBinary(ListPollingTriggersRequestSchema, request)));
    return { data: JSON.parse(reply.triggersJson) as unknown };
  }

  async delete(caller: ExternalCaller, pollKey: string | undefined): Promise<{ success: true }> {
    if (typeof pollKey !== 'string' || pollKey === '') throw new ApiError(400, 'pollKey is required');
    const request = create(DeletePollingTriggerRequestSchema, { orgId: caller.orgId, projectId: caller.projectId, pollKey });
    const reply = fromBinary(DeletePollingTriggerReplySchema, await this.ask(POLLING_REQUEST_SUBJECTS.DELETE_POLLING_TRIGGER, toBinary(DeletePollingTriggerRequestSchema, request)));
    if (!reply.found) throw new ApiError(404, POLLING_NOT_FOUND);
    return { success: true };
  }

  private ask(subject: string, request: Uint8Array): Promise<Uint8Array> {
    return requestService(this.bus, subject, request, this.config.SERVICE_REQUEST_TIMEOUT_MS, SERVICE_UNAVAILABLE.polling);
  }
}
