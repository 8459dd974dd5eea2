import { Injectable } from '@nestjs/common';
import { create, fromBinary, RevokeHookOutcome, RevokeInboundHookReplySchema, RevokeInboundHookRequestSchema, toBinary, WEBHOOK_REQUEST_SUBJECTS } from '@runline/contracts';
import { isUuid } from '../access/uuid.js';
import type { ProjectEntity } from '../entities/project.entity.js';
import { DomainError } from '../errors/domain-error.js';
import { API_ERRORS } from '../errors/error-messages.js';
import { ServiceClient } from '../service-client/service-client.js';

/** Revokes an inbound hook: its URL answers 410 from the next delivery on. Revoking twice is fine. */
@Injectable()
export class RevokeWebhookHandler {
  constructor(private readonly services: ServiceClient) {}

  async execute(command: { project: Pick<ProjectEntity, 'id' | 'orgId'>; hookId: string }): Promise<void> {
    if (!isUuid(command.hookId)) throw new DomainError('not-found', API_ERRORS.webhookNotFound);
    const request = create(RevokeInboundHookRequestSchema, { orgId: command.project.orgId, projectId: command.project.id, id: command.hookId });
    const reply = fromBinary(
      RevokeInboundHookReplySchema,
      await this.services.request('webhook', WEBHOOK_REQUEST_SUBJECTS.REVOKE_INBOUND_HOOK, toBinary(RevokeInboundHookRequestSchema, request)),
    );
    if (reply.outcome !== RevokeHookOutcome.REVOKED) throw new DomainError('not-found', API_ERRORS.webhookNotFound);
  }
}
