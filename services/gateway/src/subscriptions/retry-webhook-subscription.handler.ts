import { Inject, Injectable } from '@nestjs/common';
import { create, fromBinary, isUuid, RetrySubscriptionOutcome, RetryWebhookSubscriptionReplySchema, RetryWebhookSubscriptionRequestSchema, toBinary, WEBHOOK_REQUEST_SUBJECTS } from '@runline/contracts';
import { GatewayConfig } from '../config.js';
import type { ProjectEntity } from '../platform/store/project.entity.js';
import { DomainError } from '../platform/errors/domain-error.js';
import { SUBSCRIPTION_MESSAGES } from './subscription-messages.js';
import { webhookSubscriptionView } from './webhook-subscription-view.js';
import { ServiceClient } from '../platform/service-client/service-client.js';
import { providerCall } from './provider-call.js';

/** Tries a FAILED subscription again at the provider: 200 with it, ACTIVE or FAILED with the provider's new message. */
@Injectable()
export class RetryWebhookSubscriptionHandler {
  constructor(
    private readonly services: ServiceClient,
    @Inject(GatewayConfig) private readonly config: GatewayConfig,
  ) {}

  async execute(command: { project: Pick<ProjectEntity, 'id' | 'orgId'>; subscriptionId: string }) {
    if (!isUuid(command.subscriptionId)) throw new DomainError('not-found', SUBSCRIPTION_MESSAGES.notFound);
    const request = create(RetryWebhookSubscriptionRequestSchema, {
      orgId: command.project.orgId,
      projectId: command.project.id,
      id: command.subscriptionId,
      budgetMs: this.config.WEBHOOK_PROVIDER_BUDGET_MS,
    });
    const reply = fromBinary(
      RetryWebhookSubscriptionReplySchema,
      await providerCall(this.services, this.config, WEBHOOK_REQUEST_SUBJECTS.RETRY_WEBHOOK_SUBSCRIPTION, toBinary(RetryWebhookSubscriptionRequestSchema, request)),
    );
    switch (reply.outcome) {
      case RetrySubscriptionOutcome.TRIED:
        if (!reply.subscription) throw new Error('the webhook service answered RetryWebhookSubscription without the subscription');
        return webhookSubscriptionView(reply.subscription);
      case RetrySubscriptionOutcome.NOT_FAILED:
        throw new DomainError('conflict', SUBSCRIPTION_MESSAGES.notFailed);
      case RetrySubscriptionOutcome.IN_PROGRESS:
        throw new DomainError('conflict', SUBSCRIPTION_MESSAGES.inProgress);
      default:
        throw new DomainError('not-found', SUBSCRIPTION_MESSAGES.notFound);
    }
  }
}
