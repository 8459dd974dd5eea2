/** What other features (and the OpenAPI document) may use of dead-letters: nothing else of this folder. */
export { DEAD_LETTERS_ROUTE_DESCRIPTIONS } from './dead-letters-route-descriptions.js';
