/** What other features (and the OpenAPI document) may use of hooks: nothing else of this folder. */
export { HOOKS_ROUTE_DESCRIPTIONS } from './hooks-route-descriptions.js';
