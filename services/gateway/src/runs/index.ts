/** What other features (and the OpenAPI document) may use of runs: nothing else of this folder. */
export { RUNS_ROUTE_DESCRIPTIONS } from './runs-route-descriptions.js';
export { RUN_MESSAGES } from './run-messages.js';
export { MAX_DELAY_SECONDS, MAX_SCHEDULE_AHEAD_DAYS } from './scheduling-fields.js';
export { resultOf } from './start-run.handler.js';
