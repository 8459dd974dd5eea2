import { Inject, Injectable } from '@nestjs/common';
import { create, CreateWebhookSubscriptionReplySchema, CreateWebhookSubscriptionRequestSchema, fromBinary, toBinary, WEBHOOK_REQUEST_SUBJECTS } from '@runline/contracts';
import { GatewayConfig } from '../config.js';
import type { ProjectEntity } from '../platform/store/project.entity.js';
import { DomainError } from '../platform/errors/domain-error.js';
import { SUBSCRIPTION_MESSAGES } from './subscription-messages.js';
import { webhookSubscriptionView } from './webhook-subscription-view.js';
import { ServiceClient } from '../platform/service-client/service-client.js';
import { providerCall } from './provider-call.js';

export interface CreateWebhookSubscriptionCommand {
  project: Pick<ProjectEntity, 'id' | 'orgId' | 'publishedVersion'>;
  provider: string;
  /** Split and trimmed. */
  events: string[];
  credentials: Record<string, unknown>;
  /** Where the endpoint starts (PUBLIC_BASE_URL or the gateway's own address). */
  baseUrl: string;
}

/**
 * Creates a managed subscription: refused until the project is published (a delivery would have
 * nothing to run); the webhook service checks the provider, events and credentials and creates
 * the webhook at the provider. A provider's "no" still answers 201, FAILED with its message.
 */
@Injectable()
export class CreateWebhookSubscriptionHandler {
  constructor(
    private readonly services: ServiceClient,
    @Inject(GatewayConfig) private readonly config: GatewayConfig,
  ) {}

  async execute(command: CreateWebhookSubscriptionCommand) {
    if (command.project.publishedVersion <= 0) throw new DomainError('conflict', SUBSCRIPTION_MESSAGES.needsPublish);
    const request = create(CreateWebhookSubscriptionRequestSchema, {
      orgId: command.project.orgId,
      projectId: command.project.id,
      provider: command.provider,
      events: command.events,
      credentialsJson: JSON.stringify(command.credentials),
      baseUrl: command.baseUrl,
      budgetMs: this.config.WEBHOOK_PROVIDER_BUDGET_MS,
    });
    const reply = fromBinary(
      CreateWebhookSubscriptionReplySchema,
      await providerCall(this.services, this.config, WEBHOOK_REQUEST_SUBJECTS.CREATE_WEBHOOK_SUBSCRIPTION, toBinary(CreateWebhookSubscriptionRequestSchema, request)),
    );
    if (reply.invalid) throw new DomainError('invalid', reply.invalid);
    if (!reply.subscription) throw new Error('the webhook service answered CreateWebhookSubscription without the subscription');
    return webhookSubscriptionView(reply.subscription);
  }
}
