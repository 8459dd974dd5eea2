/** What other features (and the OpenAPI document) may use of projects: nothing else of this folder. */
export { PROJECTS_ROUTE_DESCRIPTIONS } from './projects-route-descriptions.js';
