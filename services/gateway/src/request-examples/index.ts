/** What other features (and the OpenAPI document) may use of request-examples: nothing else of this folder. */
export { REQUEST_EXAMPLES_ROUTE_DESCRIPTIONS } from './request-examples-route-descriptions.js';
