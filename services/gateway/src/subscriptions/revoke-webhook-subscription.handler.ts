import { Inject, Injectable } from '@nestjs/common';
import { create, fromBinary, isUuid, RevokeSubscriptionOutcome, RevokeWebhookSubscriptionReplySchema, RevokeWebhookSubscriptionRequestSchema, toBinary, WEBHOOK_REQUEST_SUBJECTS } from '@runline/contracts';
import { GatewayConfig } from '../config.js';
import type { ProjectEntity } from '../platform/store/project.entity.js';
import { DomainError } from '../platform/errors/domain-error.js';
import { SUBSCRIPTION_MESSAGES } from './subscription-messages.js';
import { ServiceClient } from '../platform/service-client/service-client.js';
import { providerCall } from './provider-call.js';

/**
 * Revokes a managed subscription: removed at the provider first, then REVOKED (its endpoint
 * answers 410). A provider that fails to remove it leaves it as it was: 502 with the provider's
 * message, and the user can try again.
 */
@Injectable()
export class RevokeWebhookSubscriptionHandler {
  constructor(
    private readonly services: ServiceClient,
    @Inject(GatewayConfig) private readonly config: GatewayConfig,
  ) {}

  async execute(command: { project: Pick<ProjectEntity, 'id' | 'orgId'>; subscriptionId: string }): Promise<void> {
    if (!isUuid(command.subscriptionId)) throw new DomainError('not-found', SUBSCRIPTION_MESSAGES.notFound);
    const request = create(RevokeWebhookSubscriptionRequestSchema, {
      orgId: command.project.orgId,
      projectId: command.project.id,
      id: command.subscriptionId,
      budgetMs: this.config.WEBHOOK_PROVIDER_BUDGET_MS,
    });
    const reply = fromBinary(
      RevokeWebhookSubscriptionReplySchema,
      await providerCall(this.services, this.config, WEBHOOK_REQUEST_SUBJECTS.REVOKE_WEBHOOK_SUBSCRIPTION, toBinary(RevokeWebhookSubscriptionRequestSchema, request)),
    );
    switch (reply.outcome) {
      case RevokeSubscriptionOutcome.REVOKED:
        return;
      case RevokeSubscriptionOutcome.PROVIDER_FAILED:
        throw new DomainError('upstream-failed', `${SUBSCRIPTION_MESSAGES.notRemoved} ${reply.providerMessage}`);
      case RevokeSubscriptionOutcome.IN_PROGRESS:
        throw new DomainError('conflict', SUBSCRIPTION_MESSAGES.inProgress);
      default:
        throw new DomainError('not-found', SUBSCRIPTION_MESSAGES.notFound);
    }
  }
}
