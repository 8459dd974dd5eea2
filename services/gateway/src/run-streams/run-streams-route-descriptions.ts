import type { RouteDescription } from '../platform/api-docs/route-description.js';
import { consolePipeline, dashboardOnly, tokenPipeline, unavailable } from '../platform/api-docs/route-description.js';
import { API_ERRORS } from '../platform/errors/error-messages.js';
import { ACCESS_ERRORS } from '../platform/http-guards/console-access.js';
import { CONSOLE_ERRORS } from '../platform/http-guards/console-auth.guard.js';
import { PROJECT_RUNS_STREAM_EXAMPLE, RUN_STREAM_EXAMPLE } from './run-streams-examples.js';

/** The realtime routes' descriptions (DESIGN section 14), keyed by `METHOD /path` as the code declares each route. */
export const RUN_STREAMS_ROUTE_DESCRIPTIONS: Readonly<Record<string, RouteDescription>> = {
  'GET /v1/orgs/{orgId}/external-invocations/{invocationId}/events': {
    summary: 'Follows one run as it happens (server-sent events)',
    description:
      'A `text/event-stream` of the run: `event: status` (`{status, at}`) for each transition; `event: step` (`{step}`, a `steps` entry as GET shows it) for each step as it is recorded; ' +
      '`event: message` (`{text}`) for each message a bot or flow says, right before the step of its node; `event: end` with the full invocation as GET answers it, after which the stream closes. ' +
      'Every event has an `id:`, an integer that grows within the run; send the last one you saw as `Last-Event-ID` (EventSource does) and the stream goes on after it, on any gateway replica, ' +
      'losing and repeating nothing; a finished run’s stream sends what follows at once and closes after `end`, and one resumed after `end` answers 204. A `: ping` comment goes out every 15 s. ' +
      'Caller: as for GET, the API token that started the run (with the scope of the run’s target), or a console JWT of a member of the organization; refused with the same answers.',
    tag: 'Invocations',
    query: [
      { name: 'last-event-id', in: 'header', schema: { type: 'string', pattern: '^[0-9]+$' }, description: 'The id of the last event received: the stream starts after it (without it, at the first event).' },
    ],
    responses: {
      200: {
        description: 'The stream: `status`, `step`, `message` events, then `end`, then the connection closes.',
        contentType: 'text/event-stream',
        schema: { type: 'string' },
        example: RUN_STREAM_EXAMPLE,
      },
      204: { description: 'Resumed after `end` (`Last-Event-ID` is the id of `end`): nothing follows. An EventSource stops reconnecting.', noBody: true },
      ...tokenPipeline(),
      401: { description: 'No token, or a bad one; or a console JWT that does not verify.', messages: [API_ERRORS.missingToken, API_ERRORS.invalidToken, CONSOLE_ERRORS.invalid] },
      403: { description: 'Another token started the run, or the token lacks the run’s scope.', messages: [API_ERRORS.tokenMismatch, API_ERRORS.insufficientScope, API_ERRORS.externalApiDisabled] },
      404: { description: 'No such run (or organization, for a console member).', messages: [API_ERRORS.invocationNotFound, ACCESS_ERRORS.organizationNotFound, API_ERRORS.projectNotFound] },
      ...unavailable('invocation'),
    },
  },
  'GET /v1/orgs/{orgId}/projects/{projectId}/runs/events': {
    summary: 'Follows the project’s runs as they change (server-sent events; console)',
    description:
      'A `text/event-stream`: `event: run` with the run’s logs row (as GET …/external-invocations/logs answers it) each time one of the project’s runs is created or changes, from any replica. ' +
      'Not resumable: after a reconnection, read the logs again, then follow. A `: ping` comment goes out every 15 s. Dashboard only: a console JWT of any member.',
    tag: 'Run logs',
    responses: {
      200: { description: 'The stream of logs rows.', contentType: 'text/event-stream', schema: { type: 'string' }, example: PROJECT_RUNS_STREAM_EXAMPLE },
      ...consolePipeline({ project: true }),
      ...dashboardOnly,
      ...unavailable('invocation'),
    },
  },
};
