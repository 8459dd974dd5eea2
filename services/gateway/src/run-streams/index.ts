/** What other features (the run endpoints' `Prefer: wait`, the OpenAPI document) may use of run streams. */
export { RunEndWaiter } from './run-end-waiter.js';
export { waitPreferenceOf } from './wait-preference.js';
export { RUN_STREAMS_ROUTE_DESCRIPTIONS } from './run-streams-route-descriptions.js';
