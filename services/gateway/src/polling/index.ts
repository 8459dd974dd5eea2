/** What other features (and the OpenAPI document) may use of polling: nothing else of this folder. */
export { POLLING_ROUTE_DESCRIPTIONS } from './polling-route-descriptions.js';
