/** What the launcher needs to run the webhook service in one process with the others. */
export { webhookService } from './webhook.service.js';
/** The GitHub adapter and the provider contract, for the adapter's tests against the GitHub fake. */
export { GithubAdapter } from './providers/github/github.adapter.js';
export { ProviderError, type ProviderCallContext } from './providers/provider-adapter.js';
