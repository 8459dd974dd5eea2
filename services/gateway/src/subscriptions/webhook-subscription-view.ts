import { timestampDate, type WebhookSubscription } from '@runline/contracts';

/** A managed subscription as the console shows it (DESIGN section 9): never its credentials. */
export function webhookSubscriptionView(subscription: WebhookSubscription) {
  return {
    id: subscription.id,
    provider: subscription.provider,
    events: subscription.events,
    status: subscription.status,
    endpoint: subscription.endpoint,
    providerId: subscription.providerId || null,
    failureReason: subscription.failureReason || null,
    createdAt: subscription.createdAt ? timestampDate(subscription.createdAt).toISOString() : null,
  };
}
