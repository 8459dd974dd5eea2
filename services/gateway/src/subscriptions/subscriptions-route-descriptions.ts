import { consolePipeline, projectRoute, type RouteDescription, unavailable, withMessages } from '../platform/api-docs/route-description.js';
import { listOf, ref } from '../platform/api-docs/answer-schemas.js';
import { ANSWERS, REQUESTS } from './subscriptions-examples.js';
import { SUBSCRIPTION_MESSAGES } from './subscription-messages.js';

/** The subscriptions routes' descriptions, keyed by `METHOD /path` as the code declares each route. */
export const SUBSCRIPTIONS_ROUTE_DESCRIPTIONS: Readonly<Record<string, RouteDescription>> = {
  // ---- Console: managed webhook subscriptions (DESIGN section 9).
  [`POST ${projectRoute}/webhook-subscriptions`]: {
    summary: 'Subscribes the project to a provider’s events (Stripe, Shopify, GitHub): the webhook is created at the provider',
    description:
      'Creates the webhook at the provider through its API, pointing at an inbound URL of ours, for the comma-separated `events`. Credentials: stripe `{secretKey}`; shopify `{storeDomain, accessToken, apiSecret}`; github `{token, repository, webhookSecret?}`; they are sealed at rest and never returned. ' +
      'A provider error still saves the subscription, FAILED with the provider’s message. The project needs a published definition. Caller: a member with edit access.',
    tag: 'Inbound hooks',
    requestExample: REQUESTS.createWebhookSubscription,
    responses: {
      201: { description: 'Saved: ACTIVE, or FAILED with the provider’s message (retry it).', schema: 'WebhookSubscription', example: ANSWERS.subscription },
      ...withMessages(consolePipeline({ level: 'edit', project: true, body: true }), 400, ['the credentials or events the provider needs, named']),
      409: { description: 'Nothing is published yet.', messages: [SUBSCRIPTION_MESSAGES.needsPublish] },
      ...unavailable('webhook'),
    },
  },
  [`GET ${projectRoute}/webhook-subscriptions`]: {
    summary: 'The project’s managed subscriptions (no credentials)',
    description: 'Each subscription with its provider, events, status, endpoint, the provider’s id and any failure reason; never the credentials. Caller: any member.',
    tag: 'Inbound hooks',
    responses: { 200: { description: 'The subscriptions.', schema: listOf(ref('WebhookSubscription')), example: ANSWERS.subscriptions }, ...consolePipeline({ project: true }), ...unavailable('webhook') },
  },
  [`POST ${projectRoute}/webhook-subscriptions/{subscriptionId}/retry`]: {
    summary: 'Tries a FAILED subscription again at the provider',
    description: 'Creates the webhook at the provider again, with the stored credentials. Caller: a member with edit access.',
    tag: 'Inbound hooks',
    responses: {
      200: { description: 'The subscription after the attempt.', schema: 'WebhookSubscription', example: ANSWERS.subscription },
      ...withMessages(consolePipeline({ level: 'edit', project: true }), 404, [SUBSCRIPTION_MESSAGES.notFound]),
      409: { description: 'Not FAILED, or still being created.', messages: [SUBSCRIPTION_MESSAGES.notFailed, SUBSCRIPTION_MESSAGES.inProgress] },
      ...unavailable('webhook'),
    },
  },
  [`DELETE ${projectRoute}/webhook-subscriptions/{subscriptionId}`]: {
    summary: 'Removes the webhook at the provider, then marks the subscription REVOKED; its endpoint then answers 410',
    description: 'Deletes the webhook at the provider first; only then is the subscription REVOKED, and deliveries to its endpoint answer 410. Caller: a member with edit access.',
    tag: 'Inbound hooks',
    responses: {
      204: { description: 'Revoked.', noBody: true },
      ...withMessages(consolePipeline({ level: 'edit', project: true }), 404, [SUBSCRIPTION_MESSAGES.notFound]),
      409: { description: 'Still being created.', messages: [SUBSCRIPTION_MESSAGES.inProgress] },
      502: { description: 'The provider did not remove its webhook (its message follows); nothing changed here.', messages: [`${SUBSCRIPTION_MESSAGES.notRemoved} …`] },
      ...unavailable('webhook'),
    },
  },
};
