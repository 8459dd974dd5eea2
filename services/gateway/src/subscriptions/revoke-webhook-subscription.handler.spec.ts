import { randomUUID } from 'node:crypto';
import {
  create,
  fromBinary,
  RevokeSubscriptionOutcome,
  RevokeWebhookSubscriptionReplySchema,
  RevokeWebhookSubscriptionRequestSchema,
  toBinary,
  WEBHOOK_REQUEST_SUBJECTS,
} from '@runline/contracts';
import { FakeServiceClient, refusalOf } from '../../test/fake-service-client.js';
import type { GatewayConfig } from '../config.js';
import { SUBSCRIPTION_MESSAGES } from './subscription-messages.js';
import { RevokeWebhookSubscriptionHandler } from './revoke-webhook-subscription.handler.js';

// A subscription command talks to a provider through the webhook service: it waits the provider
// budget plus a margin (provider-call.ts), not the usual service deadline.
const REVOKE = WEBHOOK_REQUEST_SUBJECTS.REVOKE_WEBHOOK_SUBSCRIPTION;
const config = { WEBHOOK_PROVIDER_BUDGET_MS: 20_000 } as GatewayConfig;
const project = { id: 'p-1', orgId: 'o-1', publishedVersion: 2 };
const subscriptionId = randomUUID();

describe('RevokeWebhookSubscriptionHandler', () => {
  const revoked = (outcome: RevokeSubscriptionOutcome, providerMessage = '') =>
    toBinary(RevokeWebhookSubscriptionReplySchema, create(RevokeWebhookSubscriptionReplySchema, { outcome, providerMessage }));

  it('an id that is no UUID: not found, nothing asked', async () => {
    const services = new FakeServiceClient();
    expect(await refusalOf(new RevokeWebhookSubscriptionHandler(services.asClient(), config).execute({ project, subscriptionId: 'nope' }))).toBe(`not-found: ${SUBSCRIPTION_MESSAGES.notFound}`);
    expect(services.calls).toEqual([]);
  });

  it('revoked: nothing to answer', async () => {
    const services = new FakeServiceClient().answer(REVOKE, revoked(RevokeSubscriptionOutcome.REVOKED));
    await expect(new RevokeWebhookSubscriptionHandler(services.asClient(), config).execute({ project, subscriptionId })).resolves.toBeUndefined();
    expect(fromBinary(RevokeWebhookSubscriptionRequestSchema, services.callsTo(REVOKE)[0]!.request)).toMatchObject({ orgId: 'o-1', projectId: 'p-1', id: subscriptionId, budgetMs: 20_000 });
  });

  it.each([
    [RevokeSubscriptionOutcome.PROVIDER_FAILED, `upstream-failed: ${SUBSCRIPTION_MESSAGES.notRemoved} Stripe said no`],
    [RevokeSubscriptionOutcome.IN_PROGRESS, `conflict: ${SUBSCRIPTION_MESSAGES.inProgress}`],
    [RevokeSubscriptionOutcome.NOT_FOUND, `not-found: ${SUBSCRIPTION_MESSAGES.notFound}`],
  ])('outcome %s: %s', async (outcome, expected) => {
    const services = new FakeServiceClient().answer(REVOKE, revoked(outcome, 'Stripe said no'));
    expect(await refusalOf(new RevokeWebhookSubscriptionHandler(services.asClient(), config).execute({ project, subscriptionId }))).toBe(expected);
  });
});
