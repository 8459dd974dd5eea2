import { checkShopifyEvents, isSubscribedTopic, shopifyTopicOf } from './shopify-topics.js';

describe('Shopify topics', () => {
  it.each([
    ['orders/create', 'ORDERS_CREATE'],
    ['app/uninstalled', 'APP_UNINSTALLED'],
    ['inventory_levels/update', 'INVENTORY_LEVELS_UPDATE'],
    ['fulfillment_orders/order_routing_complete', 'FULFILLMENT_ORDERS_ORDER_ROUTING_COMPLETE'],
    ['customer.tags_added', 'CUSTOMER_TAGS_ADDED'],
    ['subscription_billing_attempts/success', 'SUBSCRIPTION_BILLING_ATTEMPTS_SUCCESS'],
  ])('maps the delivery topic %s to the GraphQL enum value %s', (event, topic) => {
    expect(shopifyTopicOf(event)).toBe(topic);
  });

  it('accepts topics of the documented shape', () => {
    expect(checkShopifyEvents(['orders/create', 'products/update', 'customer.tags_added', 'orders/risk_assessment_changed'])).toEqual({ ok: true });
  });

  it.each([
    ['*', 'Shopify has no wildcard topic: name each topic, such as orders/create'],
    ['ORDERS_CREATE', '"ORDERS_CREATE" is not a Shopify webhook topic; topics look like orders/create or app/uninstalled'],
    ['orders', '"orders" is not a Shopify webhook topic; topics look like orders/create or app/uninstalled'],
    ['orders/', '"orders/" is not a Shopify webhook topic; topics look like orders/create or app/uninstalled'],
    ['/create', '"/create" is not a Shopify webhook topic; topics look like orders/create or app/uninstalled'],
    ['orders//create', '"orders//create" is not a Shopify webhook topic; topics look like orders/create or app/uninstalled'],
    ['orders/create ', '"orders/create " is not a Shopify webhook topic; topics look like orders/create or app/uninstalled'],
    ['orders/cre-ate', '"orders/cre-ate" is not a Shopify webhook topic; topics look like orders/create or app/uninstalled'],
    ['orders/create"}', '"orders/create"}" is not a Shopify webhook topic; topics look like orders/create or app/uninstalled'],
  ])('refuses %j with a message naming it', (event, error) => {
    expect(checkShopifyEvents(['orders/create', event])).toEqual({ ok: false, error });
  });

  it('refuses an overlong name, quoting only its start', () => {
    const long = `orders/${'x'.repeat(200)}`;
    const result = checkShopifyEvents([long]);
    expect(result).toEqual({ ok: false, error: `"${long.slice(0, 100)}" is not a Shopify webhook topic; topics look like orders/create or app/uninstalled` });
  });

  it('matches a delivery topic to the subscribed events through the enum form', () => {
    const events = ['orders/create', 'customer.tags_added'];
    expect(isSubscribedTopic('orders/create', events)).toBe(true);
    expect(isSubscribedTopic('Orders/Create', events)).toBe(true);
    expect(isSubscribedTopic('customer/tags_added', events)).toBe(true);
    expect(isSubscribedTopic('orders/paid', events)).toBe(false);
    expect(isSubscribedTopic('orders', events)).toBe(false);
    expect(isSubscribedTopic('ORDERS_CREATE', events)).toBe(false);
    expect(isSubscribedTopic(null, events)).toBe(false);
    expect(isSubscribedTopic('orders/create', [])).toBe(false);
  });
});
