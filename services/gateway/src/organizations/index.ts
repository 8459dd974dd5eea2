/** What other features (and the OpenAPI document) may use of organizations: nothing else of this folder. */
export { ORGANIZATIONS_ROUTE_DESCRIPTIONS } from './organizations-route-descriptions.js';
