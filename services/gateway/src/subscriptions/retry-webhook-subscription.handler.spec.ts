import { randomUUID } from 'node:crypto';
import {
  create,
  fromBinary,
  RetrySubscriptionOutcome,
  RetryWebhookSubscriptionReplySchema,
  RetryWebhookSubscriptionRequestSchema,
  toBinary,
  WEBHOOK_REQUEST_SUBJECTS,
} from '@runline/contracts';
import { FakeServiceClient, refusalOf } from '../../test/fake-service-client.js';
import type { GatewayConfig } from '../config.js';
import { SUBSCRIPTION_MESSAGES } from './subscription-messages.js';
import { RetryWebhookSubscriptionHandler } from './retry-webhook-subscription.handler.js';

// A subscription command talks to a provider through the webhook service: it waits the provider
// budget plus a margin (provider-call.ts), not the usual service deadline.
const RETRY = WEBHOOK_REQUEST_SUBJECTS.RETRY_WEBHOOK_SUBSCRIPTION;
const config = { WEBHOOK_PROVIDER_BUDGET_MS: 20_000 } as GatewayConfig;
const project = { id: 'p-1', orgId: 'o-1', publishedVersion: 2 };
const subscription = { id: 's-1', provider: 'stripe', events: ['charge.succeeded'], status: 'ACTIVE', endpoint: 'https://gw/v1/hooks/s-1', providerId: 'we_1' };
const view = { ...subscription, failureReason: null, createdAt: null };
const subscriptionId = randomUUID();

describe('RetryWebhookSubscriptionHandler', () => {
  const retried = (outcome: RetrySubscriptionOutcome, withSubscription = false) =>
    toBinary(RetryWebhookSubscriptionReplySchema, create(RetryWebhookSubscriptionReplySchema, { outcome, ...(withSubscription ? { subscription } : {}) } as never));

  it('an id that is no UUID: not found, nothing asked', async () => {
    const services = new FakeServiceClient();
    expect(await refusalOf(new RetryWebhookSubscriptionHandler(services.asClient(), config).execute({ project, subscriptionId: 'nope' }))).toBe(`not-found: ${SUBSCRIPTION_MESSAGES.notFound}`);
    expect(services.calls).toEqual([]);
  });

  it('tried: the subscription as it is now', async () => {
    const services = new FakeServiceClient().answer(RETRY, retried(RetrySubscriptionOutcome.TRIED, true));
    expect(await new RetryWebhookSubscriptionHandler(services.asClient(), config).execute({ project, subscriptionId })).toEqual(view);
    expect(fromBinary(RetryWebhookSubscriptionRequestSchema, services.callsTo(RETRY)[0]!.request)).toMatchObject({ orgId: 'o-1', projectId: 'p-1', id: subscriptionId, budgetMs: 20_000 });
  });

  it.each([
    [RetrySubscriptionOutcome.NOT_FAILED, `conflict: ${SUBSCRIPTION_MESSAGES.notFailed}`],
    [RetrySubscriptionOutcome.IN_PROGRESS, `conflict: ${SUBSCRIPTION_MESSAGES.inProgress}`],
    [RetrySubscriptionOutcome.NOT_FOUND, `not-found: ${SUBSCRIPTION_MESSAGES.notFound}`],
  ])('outcome %s: %s', async (outcome, expected) => {
    const services = new FakeServiceClient().answer(RETRY, retried(outcome));
    expect(await refusalOf(new RetryWebhookSubscriptionHandler(services.asClient(), config).execute({ project, subscriptionId }))).toBe(expected);
  });
});
