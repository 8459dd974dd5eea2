/** What the launcher needs to run the webhook service in one process with the others. */
export { webhookService } from './webhook.service.js';
/** The GitHub and Shopify adapters and the provider contract, for the adapters' tests against their fakes. */
export { GithubAdapter } from './providers/github/github.adapter.js';
export { ShopifyAdapter } from './providers/shopify/shopify.adapter.js';
export { ProviderError, type ProviderCallContext } from './providers/provider-adapter.js';
