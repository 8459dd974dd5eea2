/**
 * What came of a delivery's verification, as the `verdict` label of the counter below. The
 * gateway counts the hooks it verifies from its copy, the webhook service what it verifies, so
 * one metric name covers every delivery wherever it was checked.
 */
export type DeliveryVerdictLabel = 'verified' | 'not_found' | 'revoked' | 'invalid_signature' | 'stale_timestamp' | 'ignored';

/** The counter's definition (prom-client `Counter` options without the registry). */
export const DELIVERY_VERDICTS_METRIC = Object.freeze({
  name: 'runline_webhook_deliveries_total',
  help: 'Deliveries to inbound hooks and managed subscriptions, by verification verdict.',
  labelNames: ['verdict'] as const,
});
