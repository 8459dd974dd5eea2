import { Controller } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import {
  create,
  fromBinary,
  RetrySubscriptionOutcome,
  RetryWebhookSubscriptionReplySchema,
  RetryWebhookSubscriptionRequestSchema,
  toBinary,
  WEBHOOK_REQUEST_SUBJECTS,
} from '@runline/contracts';
import { TransactionRunner } from '@runline/db';
import { attemptWindow, SubscriptionProvisioner } from '../subscriptions/subscription-provisioner.js';
import { webhookSubscriptionMessage } from '../subscriptions/webhook-subscription.message.js';
import { claimAttempt, subscriptionOfProject } from '../subscriptions/webhook-subscriptions.repository.js';

/** Tries a FAILED subscription again at the provider, with the credentials it was created with. */
@Controller()
export class RetrySubscriptionHandler {
  constructor(
    private readonly transactions: TransactionRunner,
    private readonly provisioner: SubscriptionProvisioner,
  ) {}

  @MessagePattern(WEBHOOK_REQUEST_SUBJECTS.RETRY_WEBHOOK_SUBSCRIPTION)
  async execute(@Payload() data: Uint8Array): Promise<Uint8Array> {
    const request = fromBinary(RetryWebhookSubscriptionRequestSchema, data);
    const reply = (outcome: RetrySubscriptionOutcome, subscription?: Parameters<typeof webhookSubscriptionMessage>[0]) =>
      toBinary(
        RetryWebhookSubscriptionReplySchema,
        create(RetryWebhookSubscriptionReplySchema, { outcome, ...(subscription ? { subscription: webhookSubscriptionMessage(subscription) } : {}) }),
      );
    const manager = this.transactions.dataSource.manager;
    const found = await subscriptionOfProject(manager, request.projectId, request.id);
    if (!found) return reply(RetrySubscriptionOutcome.NOT_FOUND);
    if (found.status !== 'FAILED') return reply(RetrySubscriptionOutcome.NOT_FAILED);
    const window = attemptWindow(request.budgetMs);
    const claimed = await claimAttempt(manager, found.id, window.leaseUntil);
    if (!claimed) {
      const now = await subscriptionOfProject(manager, request.projectId, request.id);
      return reply(now?.status === 'FAILED' ? RetrySubscriptionOutcome.IN_PROGRESS : RetrySubscriptionOutcome.NOT_FAILED);
    }
    return reply(RetrySubscriptionOutcome.TRIED, await this.provisioner.attempt(claimed, window));
  }
}
