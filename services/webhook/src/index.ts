/** What the launcher needs to run the webhook service in one process with the others. */
export { webhookService } from './webhook.service.js';
/** The Shopify adapter, for its int-spec against the local Shopify fake (e2e/shopify-adapter.int-spec.ts). */
export { ShopifyAdapter } from './providers/shopify/shopify.adapter.js';
export { ProviderError, type ProviderCallContext } from './providers/provider-adapter.js';
