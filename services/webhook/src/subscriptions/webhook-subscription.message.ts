import { create, timestampFromDate, WebhookSubscriptionSchema, type WebhookSubscription } from '@runline/contracts';
import type { SubscriptionRow } from './webhook-subscriptions.repository.js';

/** A subscription as it leaves this service: never its credentials or signing secret. */
export function webhookSubscriptionMessage(row: SubscriptionRow): WebhookSubscription {
  return create(WebhookSubscriptionSchema, {
    id: row.id,
    orgId: row.org_id,
    projectId: row.project_id,
    provider: row.provider,
    events: row.events,
    status: row.status,
    endpoint: row.endpoint,
    providerId: row.provider_id ?? '',
    failureReason: row.status === 'FAILED' ? (row.failure_reason ?? '') : '',
    createdAt: timestampFromDate(new Date(row.created_at)),
  });
}
