import { randomUUID } from 'node:crypto';
import { Controller, Inject } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import {
  create,
  CreateWebhookSubscriptionReplySchema,
  CreateWebhookSubscriptionRequestSchema,
  fromBinary,
  toBinary,
  WEBHOOK_REQUEST_SUBJECTS,
  type CreateWebhookSubscriptionRequest,
} from '@runline/contracts';
import { TransactionRunner } from '@runline/db';
import { SecretBox } from '@runline/runtime';
import { adapterFor, PROVIDER_ADAPTERS } from '../providers/provider-registry.js';
import { attemptWindow, SubscriptionProvisioner } from '../subscriptions/subscription-provisioner.js';
import { webhookSubscriptionMessage } from '../subscriptions/webhook-subscription.message.js';
import { insertSubscription } from '../subscriptions/webhook-subscriptions.repository.js';

/** Events one subscription may name at most. */
const MAX_EVENTS = 100;

/**
 * Creates a managed subscription: checks the provider, events and credentials with the
 * provider's adapter, stores the subscription (credentials sealed) before any provider call, so
 * its endpoint id exists and nothing created at the provider is lost track of, then creates the
 * webhook there. A provider's "no" is a FAILED subscription with its message, not an error.
 */
@Controller()
export class CreateSubscriptionHandler {
  constructor(
    private readonly transactions: TransactionRunner,
    private readonly provisioner: SubscriptionProvisioner,
    @Inject(SecretBox) private readonly secrets: SecretBox,
  ) {}

  @MessagePattern(WEBHOOK_REQUEST_SUBJECTS.CREATE_WEBHOOK_SUBSCRIPTION)
  async execute(@Payload() data: Uint8Array): Promise<Uint8Array> {
    const request = fromBinary(CreateWebhookSubscriptionRequestSchema, data);
    const checked = checkRequest(request);
    if ('invalid' in checked) return toBinary(CreateWebhookSubscriptionReplySchema, create(CreateWebhookSubscriptionReplySchema, { invalid: checked.invalid }));

    const id = randomUUID();
    const window = attemptWindow(request.budgetMs);
    const row = await insertSubscription(
      this.transactions.dataSource.manager,
      {
        id,
        orgId: request.orgId,
        projectId: request.projectId,
        provider: checked.provider,
        events: request.events,
        endpoint: `${request.baseUrl.replace(/\/+$/, '')}/v1/hooks/${id}`,
        sealedCredentials: this.secrets.seal(JSON.stringify(checked.credentials)),
      },
      new Date(),
      window.leaseUntil,
    );
    const ended = await this.provisioner.attempt(row, window);
    return toBinary(CreateWebhookSubscriptionReplySchema, create(CreateWebhookSubscriptionReplySchema, { subscription: webhookSubscriptionMessage(ended) }));
  }
}

function checkRequest(request: CreateWebhookSubscriptionRequest): { provider: string; credentials: unknown } | { invalid: string } {
  const adapter = adapterFor(request.provider);
  if (!adapter) return { invalid: `provider must be one of ${PROVIDER_ADAPTERS.map((known) => known.provider).join(', ')}` };
  if (request.events.length === 0 || request.events.some((event) => event === '')) return { invalid: 'events must be comma-separated event names, at least one' };
  if (request.events.length > MAX_EVENTS) return { invalid: `events may name at most ${MAX_EVENTS} events` };
  const events = adapter.checkEvents(request.events);
  if (!events.ok) return { invalid: events.error };
  let input: unknown;
  try {
    input = JSON.parse(request.credentialsJson) as unknown;
  } catch {
    return { invalid: 'credentials must be an object' };
  }
  const credentials = adapter.parseCredentials(input);
  if (!credentials.ok) return { invalid: credentials.error };
  return { provider: adapter.provider, credentials: credentials.credentials };
}
