import { EXAMPLE_GATEWAY, type Example } from '../platform/api-docs/examples.js';

// The webhook subscription routes' examples (platform/api-docs/examples.ts says what they share and how they are checked).

const SUBSCRIPTION_ID = 'd0a4e818-8ed7-402a-8048-c0affe3dc2c0';

export const REQUESTS = {
  createWebhookSubscription: { provider: 'github', events: 'push,pull_request', credentials: { token: 'ghp_exampleTokenValue', repository: 'acme/shop', webhookSecret: 'gh-hook-secret-91c2' } },
} satisfies Record<string, Example>;

const subscription = {
  id: SUBSCRIPTION_ID,
  provider: 'github',
  events: ['push', 'pull_request'],
  status: 'ACTIVE',
  endpoint: `${EXAMPLE_GATEWAY}/v1/hooks/${SUBSCRIPTION_ID}`,
  providerId: '482913377',
  failureReason: null,
  createdAt: '2026-03-02T09:30:12.678Z',
};

export const ANSWERS = {
  subscription,
  subscriptions: { data: [subscription] },
} satisfies Record<string, Example>;
