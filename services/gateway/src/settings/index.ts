/** What other features (and the OpenAPI document) may use of settings: nothing else of this folder. */
export { SETTINGS_ROUTE_DESCRIPTIONS } from './settings-route-descriptions.js';
