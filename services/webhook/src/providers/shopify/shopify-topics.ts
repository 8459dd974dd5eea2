/**
 * Shopify's event names and the `WebhookSubscriptionTopic` enum values they map to.
 *
 * Users subscribe with the names Shopify's deliveries carry in `X-Shopify-Topic` (`orders/create`,
 * `app/uninstalled`, `fulfillment_orders/order_routing_complete`, `customer.tags_added`); the
 * Admin GraphQL API names the same topic in "enum screaming case" (`ORDERS_CREATE`): upper case,
 * with `/` and `.` written `_`. See https://shopify.dev/docs/apps/build/webhooks/subscribe/subscribe-using-api
 * ("Specify the topic name using GraphQL's enum screaming case syntax") and the topic list at
 * https://shopify.dev/docs/api/admin-graphql/latest/enums/WebhookSubscriptionTopic.
 *
 * Only the shape is checked here: which topics exist depends on the API version and the app's
 * access scopes, and Shopify itself refuses an unknown one, with a message that is then kept as
 * the subscription's failure reason.
 */

/** A resource and an action, each lower-case words joined by `_`, separated by `/` (or `.`, as in `customer.tags_added`). */
const EVENT_NAME = /^[a-z][a-z0-9_]*(?:[/.][a-z][a-z0-9_]*)+$/;
/** No topic comes near this; it keeps a user's typo from becoming a long GraphQL variable. */
const MAX_EVENT_NAME_LENGTH = 100;

/** `orders/create` → `ORDERS_CREATE`. Assumes `isShopifyEventName(event)`. */
export function shopifyTopicOf(event: string): string {
  return event.toUpperCase().replace(/[/.]/g, '_');
}

export function isShopifyEventName(event: string): boolean {
  return event.length <= MAX_EVENT_NAME_LENGTH && EVENT_NAME.test(event);
}

/** The events as given, or a message naming the first one Shopify could not have sent. */
export function checkShopifyEvents(events: readonly string[]): { ok: true } | { ok: false; error: string } {
  for (const event of events) {
    if (event === '*') {
      return { ok: false, error: 'Shopify has no wildcard topic: name each topic, such as orders/create' };
    }
    if (!isShopifyEventName(event)) {
      return { ok: false, error: `"${event.slice(0, MAX_EVENT_NAME_LENGTH)}" is not a Shopify webhook topic; topics look like orders/create or app/uninstalled` };
    }
  }
  return { ok: true };
}

/**
 * Whether a delivery's `X-Shopify-Topic` is one of the subscribed events. Both sides go through
 * the enum form, so `Orders/Create` or `orders.create` cannot slip past or be lost to a spelling.
 */
export function isSubscribedTopic(topicHeader: string | null, events: readonly string[]): boolean {
  if (topicHeader === null || !isShopifyEventName(topicHeader.toLowerCase())) return false;
  const topic = shopifyTopicOf(topicHeader);
  return events.some((event) => isShopifyEventName(event) && shopifyTopicOf(event) === topic);
}
