import { Injectable } from '@nestjs/common';
import { create, fromBinary, isUuid, RevokeHookOutcome, RevokeInboundHookReplySchema, RevokeInboundHookRequestSchema, toBinary, WEBHOOK_REQUEST_SUBJECTS } from '@runline/contracts';
import { TransactionRunner } from '@runline/db';
import { HookDirectory } from './hook-directory.js';
import { ChangePropagation } from '../platform/changes/change-propagation.js';
import type { ProjectEntity } from '../platform/store/project.entity.js';
import { DomainError } from '../platform/errors/domain-error.js';
import { HOOK_MESSAGES } from './hook-messages.js';
import { gatewayEvents } from '../platform/events/gateway-events.js';
import { ProjectRepository } from '../platform/store/project.repository.js';
import { ServiceClient } from '../platform/service-client/service-client.js';

/**
 * Revokes an inbound hook: its URL answers 410 from the next delivery on, on every replica.
 * Revoking twice is fine.
 *
 * Every gateway replica verifies deliveries from a copy of the hook tagged with the project's
 * config_version (HookDirectory), so once the webhook service has revoked the hook, the project
 * gets a new version: every copy is then stale, and the next delivery anywhere reloads the hook
 * and finds it revoked. The version moves only after the revocation is committed; moved before,
 * a replica could load the hook still active under the new version and keep it.
 */
@Injectable()
export class RevokeWebhookHandler {
  constructor(
    private readonly services: ServiceClient,
    private readonly transactions: TransactionRunner,
    private readonly projects: ProjectRepository,
    private readonly hooks: HookDirectory,
    private readonly propagation: ChangePropagation,
  ) {}

  async execute(command: { project: Pick<ProjectEntity, 'id' | 'orgId'>; hookId: string }): Promise<void> {
    if (!isUuid(command.hookId)) throw new DomainError('not-found', HOOK_MESSAGES.notFound);
    const request = create(RevokeInboundHookRequestSchema, { orgId: command.project.orgId, projectId: command.project.id, id: command.hookId });
    const reply = fromBinary(
      RevokeInboundHookReplySchema,
      await this.services.request('webhook', WEBHOOK_REQUEST_SUBJECTS.REVOKE_INBOUND_HOOK, toBinary(RevokeInboundHookRequestSchema, request)),
    );
    if (reply.outcome !== RevokeHookOutcome.REVOKED) throw new DomainError('not-found', HOOK_MESSAGES.notFound);

    const hook = { id: command.hookId, orgId: command.project.orgId, projectId: command.project.id };
    const event = await this.transactions.run(async ({ manager, emit }) => {
      const revoked = gatewayEvents.inboundHookRevoked(hook, await this.projects.nextConfigVersion(manager, hook.projectId));
      emit(revoked);
      return revoked;
    });
    this.hooks.evict(hook.id);
    await this.propagation.inForce([event]);
  }
}
