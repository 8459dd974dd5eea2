/** What other features (and the OpenAPI document) may use of tokens: nothing else of this folder. */
export { TOKENS_ROUTE_DESCRIPTIONS } from './tokens-route-descriptions.js';
