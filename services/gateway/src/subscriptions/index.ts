/** What other features (and the OpenAPI document) may use of subscriptions: nothing else of this folder. */
export { SUBSCRIPTIONS_ROUTE_DESCRIPTIONS } from './subscriptions-route-descriptions.js';
