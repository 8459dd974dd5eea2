import type { RouteDescription } from '../platform/api-docs/route-description.js';
import { DEAD_LETTERS_ROUTE_DESCRIPTIONS } from '../dead-letters/index.js';
import { HOOKS_ROUTE_DESCRIPTIONS } from '../hooks/index.js';
import { ORGANIZATIONS_ROUTE_DESCRIPTIONS } from '../organizations/index.js';
import { POLLING_ROUTE_DESCRIPTIONS } from '../polling/index.js';
import { PROJECTS_ROUTE_DESCRIPTIONS } from '../projects/index.js';
import { REQUEST_EXAMPLES_ROUTE_DESCRIPTIONS } from '../request-examples/index.js';
import { RUNS_ROUTE_DESCRIPTIONS } from '../runs/index.js';
import { RUN_STREAMS_ROUTE_DESCRIPTIONS } from '../run-streams/index.js';
import { SCHEDULES_ROUTE_DESCRIPTIONS } from '../schedules/index.js';
import { SETTINGS_ROUTE_DESCRIPTIONS } from '../settings/index.js';
import { SUBSCRIPTIONS_ROUTE_DESCRIPTIONS } from '../subscriptions/index.js';
import { TEMPLATES_ROUTE_DESCRIPTIONS } from '../templates/index.js';
import { TOKENS_ROUTE_DESCRIPTIONS } from '../tokens/index.js';

export { TAG_DESCRIPTIONS, type AnswerDescription, type RouteDescription } from '../platform/api-docs/route-description.js';

/**
 * THE route description table, keyed by `METHOD /path` as the code declares the route
 * (gateway-routes.ts): each feature describes its own routes (`<feature>/*-route-descriptions.ts`)
 * and this composes them. A route without an entry here fails the document's build, and the
 * route-coverage test (e2e/openapi.e2e-spec.ts) compares the document with the routes the
 * running gateway registered.
 */
export const ROUTE_DESCRIPTIONS: Readonly<Record<string, RouteDescription>> = {
  ...RUNS_ROUTE_DESCRIPTIONS,
  ...RUN_STREAMS_ROUTE_DESCRIPTIONS,
  ...POLLING_ROUTE_DESCRIPTIONS,
  ...DEAD_LETTERS_ROUTE_DESCRIPTIONS,
  ...SCHEDULES_ROUTE_DESCRIPTIONS,
  ...HOOKS_ROUTE_DESCRIPTIONS,
  ...ORGANIZATIONS_ROUTE_DESCRIPTIONS,
  ...PROJECTS_ROUTE_DESCRIPTIONS,
  ...SETTINGS_ROUTE_DESCRIPTIONS,
  ...TOKENS_ROUTE_DESCRIPTIONS,
  ...TEMPLATES_ROUTE_DESCRIPTIONS,
  ...REQUEST_EXAMPLES_ROUTE_DESCRIPTIONS,
  ...SUBSCRIPTIONS_ROUTE_DESCRIPTIONS,
};
