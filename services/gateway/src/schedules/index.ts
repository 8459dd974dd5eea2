/** What other features (and the OpenAPI document) may use of schedules: nothing else of this folder. */
export { SCHEDULES_ROUTE_DESCRIPTIONS } from './schedules-route-descriptions.js';
