import type { ProviderAdapter } from './provider-adapter.js';
import { GithubAdapter } from './github/github.adapter.js';
import { ShopifyAdapter } from './shopify/shopify.adapter.js';
import { StripeAdapter } from './stripe/stripe.adapter.js';

/**
 * Every provider Runline manages webhooks at, one adapter each. Adding a provider is one line
 * here; its name is what `POST …/webhook-subscriptions` takes as `provider`.
 */
export const PROVIDER_ADAPTERS: readonly ProviderAdapter[] = [
  new StripeAdapter(),
  new GithubAdapter(),
  new ShopifyAdapter(),
];

/** The adapter of a provider name, or undefined for a name that is not one. */
export function adapterFor(provider: string): ProviderAdapter | undefined {
  return PROVIDER_ADAPTERS.find((adapter) => adapter.provider === provider);
}
