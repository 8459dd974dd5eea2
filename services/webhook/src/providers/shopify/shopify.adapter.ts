import type { ProviderAdapter, CreatedProviderWebhook, ProviderCallContext } from '../provider-adapter.js';
import { ProviderError } from '../provider-adapter.js';
import { callShopifyAdminApi, isObject, userErrorMessage, userErrorsOf } from './shopify-admin-api.js';
import { parseShopifyCredentials, type ShopifyCredentials } from './shopify-credentials.js';
import { ShopifySignatureScheme } from './shopify-signature.scheme.js';
import { checkShopifyEvents, isSubscribedTopic, shopifyTopicOf } from './shopify-topics.js';

/**
 * The Admin API version spoken unless `SHOPIFY_API_VERSION` (the call context's `apiVersion`)
 * says otherwise: the stable release of October 2026. Shopify supports each version for at least twelve months
 * (https://shopify.dev/docs/api/usage/versioning); the two mutations used here have not changed
 * shape across versions, so moving on is a configuration change.
 */
export const DEFAULT_SHOPIFY_API_VERSION = '2026-10';
/** `YYYY-MM` of a quarterly release, or `unstable`; the webhook service's configuration checks the same at boot. */
export const SHOPIFY_API_VERSION_PATTERN = /^(?:\d{4}-(?:01|04|07|10)|unstable)$/;

/** A subscription's Shopify ids: one webhook subscription per topic, joined. */
const ID_SEPARATOR = ',';

/**
 * "Creates a new webhook subscription" (https://shopify.dev/docs/api/admin-graphql/latest/mutations/webhookSubscriptionCreate).
 * `uri` replaced the deprecated `callbackUrl` of WebhookSubscriptionInput in 2025-10
 * (https://shopify.dev/docs/api/admin-graphql/2025-10/input-objects/webhooksubscriptioninput).
 */
const CREATE = `mutation RunlineWebhookSubscriptionCreate($topic: WebhookSubscriptionTopic!, $webhookSubscription: WebhookSubscriptionInput!) {
  webhookSubscriptionCreate(topic: $topic, webhookSubscription: $webhookSubscription) {
    webhookSubscription { id topic }
    userErrors { field message }
  }
}`;

/** "Deletes a webhook subscription" (https://shopify.dev/docs/api/admin-graphql/latest/mutations/webhookSubscriptionDelete). */
const DELETE = `mutation RunlineWebhookSubscriptionDelete($id: ID!) {
  webhookSubscriptionDelete(id: $id) {
    deletedWebhookSubscriptionId
    userErrors { field message }
  }
}`;

/** What `webhookSubscriptionDelete` says of an id that is not (or no longer) a subscription of this app. */
const DOES_NOT_EXIST = 'Webhook subscription does not exist';

/**
 * Shopify behind the ProviderAdapter contract: webhook subscriptions through the Admin GraphQL
 * API of the shop in `storeDomain`, deliveries signed with the app's client secret.
 *
 * Shopify subscribes one topic per subscription, so a Runline subscription to several events is
 * several Shopify subscriptions: created one after the other (if one fails, the ones already
 * made are deleted again, so a failed subscription leaves nothing behind at the shop), and their
 * ids kept together, comma-separated, as the subscription's `providerId`.
 */
export class ShopifyAdapter implements ProviderAdapter<ShopifyCredentials> {
  readonly provider = 'shopify' as const;
  readonly scheme = new ShopifySignatureScheme();

  parseCredentials(input: unknown) {
    return parseShopifyCredentials(input);
  }

  checkEvents(events: readonly string[]) {
    return checkShopifyEvents(events);
  }

  async create(credentials: ShopifyCredentials, endpoint: string, events: readonly string[], context: ProviderCallContext): Promise<CreatedProviderWebhook> {
    const topics = [...new Set(events.map(shopifyTopicOf))];
    const created: string[] = [];
    try {
      for (const topic of topics) created.push(await this.createOne(credentials, endpoint, topic, context));
    } catch (error) {
      await this.deleteQuietly(credentials, created, context);
      throw error;
    }
    return { providerId: created.join(ID_SEPARATOR), signingSecret: credentials.apiSecret };
  }

  async remove(credentials: ShopifyCredentials, providerId: string, context: ProviderCallContext): Promise<'removed' | 'already-gone'> {
    const ids = providerId.split(ID_SEPARATOR).filter((id) => id !== '');
    let removed = false;
    for (const id of ids) {
      if ((await this.deleteOne(credentials, id, context)) === 'removed') removed = true;
    }
    return removed ? 'removed' : 'already-gone';
  }

  classify(eventName: string | null, events: readonly string[]): 'run' | 'ignore' {
    return isSubscribedTopic(eventName, events) ? 'run' : 'ignore';
  }

  private async createOne(credentials: ShopifyCredentials, endpoint: string, topic: string, context: ProviderCallContext): Promise<string> {
    const data = await callShopifyAdminApi(credentials, apiVersionOf(context), CREATE, { topic, webhookSubscription: { uri: endpoint, format: 'JSON' } }, context);
    const payload = data.webhookSubscriptionCreate;
    const userErrors = userErrorsOf(payload);
    if (userErrors.length > 0) throw new ProviderError(userErrorMessage(userErrors), false);
    const subscription = isObject(payload) ? payload.webhookSubscription : undefined;
    const id = isObject(subscription) ? subscription.id : undefined;
    if (typeof id !== 'string' || id === '' || id.includes(ID_SEPARATOR)) {
      throw new ProviderError('Shopify answered webhookSubscriptionCreate without a subscription id', false);
    }
    return id;
  }

  /**
   * A subscription Shopify no longer has counts as deleted: it answers an unknown id with the
   * userError "Webhook subscription does not exist" and a null `deletedWebhookSubscriptionId`.
   */
  private async deleteOne(credentials: ShopifyCredentials, id: string, context: ProviderCallContext): Promise<'removed' | 'already-gone'> {
    const data = await callShopifyAdminApi(credentials, apiVersionOf(context), DELETE, { id }, context);
    const payload = data.webhookSubscriptionDelete;
    const userErrors = userErrorsOf(payload);
    if (userErrors.length > 0) {
      if (userErrors.every((error) => error.message === DOES_NOT_EXIST)) return 'already-gone';
      throw new ProviderError(userErrorMessage(userErrors), false);
    }
    const deleted = isObject(payload) ? payload.deletedWebhookSubscriptionId : undefined;
    return typeof deleted === 'string' && deleted !== '' ? 'removed' : 'already-gone';
  }

  /**
   * Undoes a partly made subscription. One that cannot be deleted now stays at the shop, sending
   * to an endpoint that starts no run; the error that stopped the creation is the one to report.
   */
  private async deleteQuietly(credentials: ShopifyCredentials, ids: readonly string[], context: ProviderCallContext): Promise<void> {
    for (const id of ids) {
      try {
        await this.deleteOne(credentials, id, context);
      } catch {
        // Best effort, see above.
      }
    }
  }
}

/** The configured version; one that is not Shopify's is a "no" rather than a request to a made-up path. */
function apiVersionOf(context: ProviderCallContext): string {
  const version = context.apiVersion ?? DEFAULT_SHOPIFY_API_VERSION;
  if (!SHOPIFY_API_VERSION_PATTERN.test(version)) throw new ProviderError(`Not a Shopify API version: "${version}"`, false);
  return version;
}
