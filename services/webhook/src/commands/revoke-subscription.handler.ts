import { Controller, Inject } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import {
  create,
  fromBinary,
  RevokeSubscriptionOutcome,
  RevokeWebhookSubscriptionReplySchema,
  RevokeWebhookSubscriptionRequestSchema,
  toBinary,
  WEBHOOK_REQUEST_SUBJECTS,
} from '@runline/contracts';
import { TransactionRunner } from '@runline/db';
import type { Logger } from '@runline/observability';
import { LOGGER } from '@runline/runtime';
import { attemptWindow, failureReason, SubscriptionProvisioner } from '../subscriptions/subscription-provisioner.js';
import { markRevoked, subscriptionOfProject } from '../subscriptions/webhook-subscriptions.repository.js';

/**
 * Revokes a subscription: the webhook is removed at the provider first (a provider that says it
 * is already gone counts as removed), then the subscription is REVOKED and its endpoint answers
 * 410. If the provider fails to remove it, nothing changes here and the provider's message is
 * answered, so the user never sees REVOKED for a webhook that still delivers.
 */
@Controller()
export class RevokeSubscriptionHandler {
  constructor(
    private readonly transactions: TransactionRunner,
    private readonly provisioner: SubscriptionProvisioner,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  @MessagePattern(WEBHOOK_REQUEST_SUBJECTS.REVOKE_WEBHOOK_SUBSCRIPTION)
  async execute(@Payload() data: Uint8Array): Promise<Uint8Array> {
    const request = fromBinary(RevokeWebhookSubscriptionRequestSchema, data);
    const reply = (outcome: RevokeSubscriptionOutcome, providerMessage = '') =>
      toBinary(RevokeWebhookSubscriptionReplySchema, create(RevokeWebhookSubscriptionReplySchema, { outcome, providerMessage }));
    const manager = this.transactions.dataSource.manager;
    const row = await subscriptionOfProject(manager, request.projectId, request.id);
    if (!row) return reply(RevokeSubscriptionOutcome.NOT_FOUND);
    if (row.status === 'REVOKED') return reply(RevokeSubscriptionOutcome.REVOKED);
    if (row.status === 'FAILED' && row.attempt_until && new Date(row.attempt_until).getTime() > Date.now()) return reply(RevokeSubscriptionOutcome.IN_PROGRESS);
    try {
      const removed = await this.provisioner.remove(row, attemptWindow(request.budgetMs));
      this.logger.info({ subscriptionId: row.id, provider: row.provider, removed }, 'webhook removed at the provider');
    } catch (error) {
      const message = failureReason(error);
      this.logger.warn({ subscriptionId: row.id, provider: row.provider, reason: message }, 'the provider did not remove the webhook');
      return reply(RevokeSubscriptionOutcome.PROVIDER_FAILED, message);
    }
    await markRevoked(manager, row.id, new Date());
    return reply(RevokeSubscriptionOutcome.REVOKED);
  }
}
