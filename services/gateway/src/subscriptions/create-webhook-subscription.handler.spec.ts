import {
  create,
  CreateWebhookSubscriptionReplySchema,
  CreateWebhookSubscriptionRequestSchema,
  fromBinary,
  toBinary,
  WEBHOOK_REQUEST_SUBJECTS,
} from '@runline/contracts';
import { FakeServiceClient, refusalOf } from '../../test/fake-service-client.js';
import type { GatewayConfig } from '../config.js';
import { SUBSCRIPTION_MESSAGES } from './subscription-messages.js';
import { SERVICE_UNAVAILABLE } from '../platform/service-client/service-client.js';
import { CreateWebhookSubscriptionHandler } from './create-webhook-subscription.handler.js';

// A subscription command talks to a provider through the webhook service: it waits the provider
// budget plus a margin (provider-call.ts), not the usual service deadline.
const CREATE = WEBHOOK_REQUEST_SUBJECTS.CREATE_WEBHOOK_SUBSCRIPTION;
const config = { WEBHOOK_PROVIDER_BUDGET_MS: 20_000 } as GatewayConfig;
const project = { id: 'p-1', orgId: 'o-1', publishedVersion: 2 };
const subscription = { id: 's-1', provider: 'stripe', events: ['charge.succeeded'], status: 'ACTIVE', endpoint: 'https://gw/v1/hooks/s-1', providerId: 'we_1' };
const view = { ...subscription, failureReason: null, createdAt: null };

describe('CreateWebhookSubscriptionHandler', () => {
  const command = { project, provider: 'stripe', events: ['charge.succeeded'], credentials: { secretKey: 'sk' }, baseUrl: 'https://gw' };
  const created = (fields: Record<string, unknown>) => toBinary(CreateWebhookSubscriptionReplySchema, create(CreateWebhookSubscriptionReplySchema, fields as never));

  it('refuses a project never published, without asking the webhook service', async () => {
    const services = new FakeServiceClient();
    expect(await refusalOf(new CreateWebhookSubscriptionHandler(services.asClient(), config).execute({ ...command, project: { ...project, publishedVersion: 0 } }))).toBe(
      `conflict: ${SUBSCRIPTION_MESSAGES.needsPublish}`,
    );
    expect(services.calls).toEqual([]);
  });

  it('sends the provider, events, credentials and budget, waits beyond the budget, and answers the subscription', async () => {
    const services = new FakeServiceClient().answer(CREATE, created({ subscription }));
    expect(await new CreateWebhookSubscriptionHandler(services.asClient(), config).execute(command)).toEqual(view);
    const [call] = services.callsTo(CREATE);
    expect(call!.timeoutMs).toBeGreaterThan(config.WEBHOOK_PROVIDER_BUDGET_MS);
    const sent = fromBinary(CreateWebhookSubscriptionRequestSchema, call!.request);
    expect(sent).toMatchObject({ orgId: 'o-1', projectId: 'p-1', provider: 'stripe', events: ['charge.succeeded'], baseUrl: 'https://gw', budgetMs: 20_000 });
    expect(JSON.parse(sent.credentialsJson)).toEqual({ secretKey: 'sk' });
  });

  it('the webhook service’s refusal is invalid with its reason; its silence is unavailable', async () => {
    const refused = new FakeServiceClient().answer(CREATE, created({ invalid: 'unknown event: charge.nope' }));
    expect(await refusalOf(new CreateWebhookSubscriptionHandler(refused.asClient(), config).execute(command))).toBe('invalid: unknown event: charge.nope');
    const silent = new FakeServiceClient().answer(CREATE, 'silent');
    expect(await refusalOf(new CreateWebhookSubscriptionHandler(silent.asClient(), config).execute(command))).toBe(`unavailable: ${SERVICE_UNAVAILABLE.webhook}`);
  });
});
