import { consolePipeline, projectRoute, type RouteDescription, unavailable, withMessages } from '../platform/api-docs/route-description.js';
import { uuid } from '../platform/api-docs/answer-schemas.js';
import { ANSWERS } from './request-examples-examples.js';
import { REQUEST_EXAMPLE_ERRORS } from './build-request-example.handler.js';
import { TEMPLATE_ERRORS } from '../templates/index.js';

/** The request-examples routes' descriptions, keyed by `METHOD /path` as the code declares each route. */
export const REQUEST_EXAMPLES_ROUTE_DESCRIPTIONS: Readonly<Record<string, RouteDescription>> = {
  [`GET ${projectRoute}/request-example`]: {
    summary: 'A ready request for one run endpoint (a template’s body, or the keys the trigger expects), with curl, JavaScript and Python',
    description: 'Builds the request for `endpoint` (a run endpoint name such as `flows.trigger`): the URL, the headers (a fresh idempotency key) and a body, from the template `templateId` or from the keys the published trigger expects, with snippets to copy. The token is the `$RUNLINE_TOKEN` placeholder. Caller: any member.',
    tag: 'Templates',
    query: [
      { name: 'endpoint', schema: { type: 'string' }, description: 'The run endpoint, as in a template (`flows.trigger`).' },
      { name: 'templateId', schema: uuid, description: 'Build from this template’s body.' },
    ],
    responses: {
      200: { description: 'The example; the token is the `$RUNLINE_TOKEN` placeholder.', schema: 'RequestExample', example: ANSWERS.requestExample },
      ...withMessages(withMessages(consolePipeline({ project: true }), 400, [REQUEST_EXAMPLE_ERRORS.endpointRequired]), 404, [TEMPLATE_ERRORS.notFound]),
      ...unavailable(),
    },
  },
};
