import { bodyMessages, consolePipeline, dashboardOnly, type QueryParameter, type RouteDescription, SCOPE_OF, tokenPipeline, TYPE_MESSAGES, unavailable, versionError, withMessages } from '../platform/api-docs/route-description.js';
import { ref, uuid } from '../platform/api-docs/answer-schemas.js';
import { ANSWERS, REQUESTS } from './runs-examples.js';
import { API_ERRORS } from '../platform/errors/error-messages.js';
import { APPROVAL_MESSAGES } from '../approvals/index.js';
import { RUN_MESSAGES } from './run-messages.js';
import { QUOTA_EXCEEDED_MESSAGE, QUOTA_UNAVAILABLE_MESSAGE } from '@runline/contracts';
import { ACCESS_ERRORS } from '../platform/http-guards/console-access.js';
import { CONSOLE_ERRORS } from '../platform/http-guards/console-auth.guard.js';
import { SERVICE_UNAVAILABLE } from '../platform/service-client/service-client.js';
import { RUN_LOG_QUERY_MESSAGES, RUN_MODES, RUN_STATUSES, RUN_TARGET_TYPES, RUN_TRIGGER_SOURCES } from './run-log-query.js';
import { MAX_IDEMPOTENCY_KEY_LENGTH } from './start-run.handler.js';

const SCHEDULING_MESSAGES = [
  RUN_MESSAGES.schedulingBothFields,
  RUN_MESSAGES.runAtInvalid,
  RUN_MESSAGES.runAtNotInFuture,
  RUN_MESSAGES.runAtTooFar,
  RUN_MESSAGES.delaySecondsInvalid,
  RUN_MESSAGES.delaySecondsTooLarge,
];

const idempotencyHeader: QueryParameter[] = [
  { name: 'x-idempotency-key', in: 'header', schema: { type: 'string' }, description: `A retry with the same key returns the same run instead of starting another (a key over ${MAX_IDEMPOTENCY_KEY_LENGTH} characters is ignored).` },
];

/** `Prefer: wait=N` on the async endpoints (DESIGN section 14, RFC 7240). */
const preferHeader: QueryParameter = {
  name: 'prefer',
  in: 'header',
  schema: { type: 'string', example: 'wait=10' },
  description:
    '`wait=N` (N from 1 to 60): hold the answer up to N seconds; a run that ends by then is answered 200 with the sync endpoint’s body (`{error, invocationId, status}` for a FAILED or TIMEOUT run) and `Preference-Applied: wait=N`, otherwise the usual 202. ' +
    'The run stays async (its callback is sent). Ignored (202 at once) for a scheduled run (`runAt`, `delaySeconds`) and for any other N, as RFC 7240 lets a server ignore a preference.',
};

/** The six run endpoints: the same pipeline, answers that differ by sync or async. */
function runRoute(
  summary: string,
  about: string,
  kind: keyof typeof TYPE_MESSAGES,
  mode: 'sync' | 'async',
  examples: { request: Record<string, unknown>; finished: unknown; accepted: unknown },
): RouteDescription {
  const pipeline = tokenPipeline({ typeMessages: TYPE_MESSAGES[kind], body: true, rateLimited: true });
  return {
    summary,
    description:
      `${about} Caller: an API token of the project with the \`${SCOPE_OF[kind]}\` scope (\`Authorization: Bearer\` or \`x-api-key\`). ` +
      'Rate limited per token and endpoint (the `X-RateLimit-*` headers); every run but a dry run counts against the monthly quota.',
    tag: 'Runs',
    query: mode === 'async' ? [...idempotencyHeader, preferHeader] : idempotencyHeader,
    requestExample: examples.request,
    responses: {
      ...(mode === 'sync'
        ? {
            200: { description: 'The run finished (or a dry run was checked); `result` holds its output.', schema: 'RunAnswer', example: examples.finished },
            202: {
              description: 'The run paused (at a Wait or an Approval node) and goes on later, or a run with the same idempotency key is still in progress: read it with GET /external-invocations/{invocationId}.',
              schema: 'RunAnswer',
              example: examples.accepted,
            },
          }
        : {
            200: {
              description:
                (kind === 'bots'
                  ? 'A repeat of an idempotency key whose run has finished: that run, with `idempotentReplay` true.'
                  : 'A dry run (`dryRun: true`): checked, not run; `result.validation` says what the trigger expects. Or a repeat of an idempotency key whose run has finished (`idempotentReplay` true).') +
                ' Or, with `Prefer: wait=N`, the run ended within N seconds: the sync endpoint’s body (`FailedRun` for a FAILED or TIMEOUT run), with `Preference-Applied: wait=N`.',
              schema: { anyOf: [ref('RunAnswer'), ref('FailedRun')] },
              headers: ['Preference-Applied'],
              example: examples.finished,
            },
            202: { description: 'The run is accepted (QUEUED), or SCHEDULED with `scheduledFor`.', schema: 'RunAnswer', example: examples.accepted },
          }),
      ...pipeline,
      400: { ...pipeline[400]!, messages: [...pipeline[400]!.messages!, ...(mode === 'async' ? SCHEDULING_MESSAGES : [])] },
      429: {
        description: 'The token used up its rate limit, or the organization its monthly quota (`quota`, and the X-Quota headers).',
        schema: { anyOf: [ref('Error'), ref('QuotaError')] },
        messages: [API_ERRORS.rateLimitExceeded, QUOTA_EXCEEDED_MESSAGE],
      },
      500: {
        description:
          mode === 'sync'
            ? 'The run ran and failed (`FailedRun`: `invocationId` and `status` FAILED), or could not be started.'
            : 'The run could not be started; retry with the same idempotency key.',
        schema: mode === 'sync' ? { anyOf: [ref('FailedRun'), ref('Error')] } : 'Error',
        messages: mode === 'sync' ? [RUN_MESSAGES.syncTriggerFailed] : [RUN_MESSAGES.runNotStarted],
      },
      503: { description: 'The invocation service or the quota check did not answer; retry shortly.', messages: [API_ERRORS.invocationServiceUnavailable, QUOTA_UNAVAILABLE_MESSAGE, API_ERRORS.serviceTemporarilyUnavailable] },
    },
  };
}

const logsQuery: QueryParameter[] = [
  { name: 'projectId', schema: uuid, description: 'Only this project’s runs.' },
  // Their values are named in the descriptions, not as enums: the console passes them on as strings.
  { name: 'status', schema: { type: 'string' }, description: `Only runs in this status: ${RUN_STATUSES.join(', ')}.` },
  { name: 'targetType', schema: { type: 'string' }, description: `Only runs of this target: ${RUN_TARGET_TYPES.join(', ')}.` },
  { name: 'mode', schema: { type: 'string' }, description: `Only runs of this mode: ${RUN_MODES.join(', ')}.` },
  { name: 'triggerSource', schema: { type: 'string' }, description: `Only runs started this way: ${RUN_TRIGGER_SOURCES.join(', ')}.` },
  { name: 'from', schema: { type: 'string', format: 'date-time' }, description: 'Created at or after this time.' },
  { name: 'to', schema: { type: 'string', format: 'date-time' }, description: 'Created before this time.' },
  { name: 'q', schema: { type: 'string' }, description: 'An invocationId or an idempotency key.' },
  { name: 'limit', schema: { type: 'integer', minimum: 1, maximum: 200, default: 50 }, description: 'Page size.' },
  { name: 'cursor', schema: { type: 'string' }, description: 'The previous page’s `nextCursor`.' },
];
const logQueryMessages = [
  RUN_LOG_QUERY_MESSAGES.given('status'),
  RUN_LOG_QUERY_MESSAGES.oneOf('status', ['…']),
  RUN_LOG_QUERY_MESSAGES.time('from'),
  RUN_LOG_QUERY_MESSAGES.fromBeforeTo,
  RUN_LOG_QUERY_MESSAGES.limit,
  RUN_LOG_QUERY_MESSAGES.cursor,
  RUN_LOG_QUERY_MESSAGES.q,
  RUN_LOG_QUERY_MESSAGES.bucket,
];

/** The runs routes' descriptions, keyed by `METHOD /path` as the code declares each route. */
export const RUNS_ROUTE_DESCRIPTIONS: Readonly<Record<string, RouteDescription>> = {
  // ---- The spec's token routes.
  'POST /v1/orgs/{orgId}/bots/{projectId}/message': runRoute(
    'Sends a message to the chatbot and waits for its answer',
    'Runs the published chatbot with one message and answers its replies (`result.messages`, `result.actions`). Reuse `sessionId` to continue a conversation; without it, `userId` is the session; with neither, a new session starts. Chatbot projects only.',
    'bots',
    'sync',
    { request: REQUESTS.botMessage, finished: ANSWERS.botMessage, accepted: { invocationId: ANSWERS.botMessage.invocationId, status: 'SUSPENDED', sessionId: ANSWERS.botMessage.sessionId } },
  ),
  'POST /v1/orgs/{orgId}/bots/{projectId}/invoke': runRoute(
    'Sends a message to the chatbot without waiting (callback optional)',
    'Queues one message for the published chatbot and answers 202 at once; read the run with GET /external-invocations/{invocationId}, or have its end POSTed to `webhookUrl`, signed with `webhookSecret` (`X-Service-Signature`). It never schedules: `runAt` and `delaySeconds` are ignored. Chatbot projects only.',
    'bots',
    'async',
    { request: REQUESTS.botInvoke, finished: { ...ANSWERS.botMessage, idempotentReplay: true }, accepted: ANSWERS.botInvoke },
  ),
  'POST /v1/orgs/{orgId}/flows/{projectId}/trigger': runRoute(
    'Runs the chatbot project’s flow and waits for it',
    'Runs the flow with the body’s top-level fields as its payload, after checking them against the Trigger node (its key, and the expected keys `event` and `customerId`); `dryRun: true` only checks. A run that fails answers 500 with its `invocationId`. Chatbot projects only.',
    'flows',
    'sync',
    { request: REQUESTS.flowTrigger, finished: ANSWERS.flowTrigger, accepted: { invocationId: ANSWERS.flowTrigger.invocationId, status: 'SUSPENDED' } },
  ),
  'POST /v1/orgs/{orgId}/flows/{projectId}/trigger-async': runRoute(
    'Starts or schedules a run of the chatbot project’s flow',
    'Answers 202 at once: QUEUED, or SCHEDULED with `scheduledFor` when `runAt` or `delaySeconds` is given. An immediate run is checked against the Trigger node first; a scheduled one is not checked when it fires (check it with `dryRun: true` when scheduling). Its end is POSTed to `webhookUrl` (or the project’s default callback), signed. Chatbot projects only.',
    'flows',
    'async',
    { request: REQUESTS.flowTriggerAsync, finished: ANSWERS.dryRun, accepted: ANSWERS.runAccepted },
  ),
  'POST /v1/orgs/{orgId}/automations/{projectId}/trigger': runRoute(
    'Runs the automation and waits for it',
    'Runs the published workflow (the draft with `runtimeStage: app`) with `payload`, after checking it against the Trigger node; `result` is what the workflow returns. A run that fails answers 500 with its `invocationId`. Automation projects only.',
    'automations',
    'sync',
    { request: REQUESTS.automationTrigger, finished: ANSWERS.automationTrigger, accepted: { invocationId: ANSWERS.automationTrigger.invocationId, status: 'SUSPENDED' } },
  ),
  'POST /v1/orgs/{orgId}/automations/{projectId}/trigger-async': runRoute(
    'Starts or schedules a run of the automation',
    'As the sync automation trigger, but answers 202 at once: QUEUED, or SCHEDULED with `scheduledFor` when `runAt` or `delaySeconds` is given. A failed run is retried as the Trigger node says, then kept as a dead letter; its end is POSTed to the callback, signed. Automation projects only.',
    'automations',
    'async',
    { request: REQUESTS.automationTriggerAsync, finished: { ...ANSWERS.dryRun, result: { validation: { valid: true, expectedKeys: ['orderId', 'amount'], actualKeys: ['orderId', 'amount'], missingKeys: [], errors: [] } } }, accepted: { ...ANSWERS.runAccepted, scheduledFor: '2026-03-03T09:00:00.000Z' } },
  ),

  'GET /v1/orgs/{orgId}/external-invocations/{invocationId}': {
    summary: 'Reads one run: the token that started it, or any member of the organization (console JWT)',
    description:
      'The full invocation: status, timing, the request as stored, result, trace, steps and callback attempts, with secrets redacted. Poll every few seconds until the status is final (SUCCEEDED, FAILED, TIMEOUT, CANCELLED). ' +
      'Caller: the API token that started the run (with the scope of the run’s target), or a console JWT of a member of the organization.',
    tag: 'Invocations',
    responses: {
      200: { description: 'The full invocation (secrets redacted).', schema: 'Invocation', example: ANSWERS.invocation },
      ...tokenPipeline(),
      401: { description: 'No token, or a bad one; or a console JWT that does not verify.', messages: [API_ERRORS.missingToken, API_ERRORS.invalidToken, CONSOLE_ERRORS.invalid] },
      403: { description: 'Another token started the run, or the token lacks the run’s scope.', messages: [API_ERRORS.tokenMismatch, API_ERRORS.insufficientScope, API_ERRORS.externalApiDisabled] },
      404: { description: 'No such run (or organization, for a console member).', messages: [API_ERRORS.invocationNotFound, ACCESS_ERRORS.organizationNotFound, API_ERRORS.projectNotFound] },
      ...unavailable('invocation'),
    },
  },
  'PATCH /v1/orgs/{orgId}/external-invocations/{invocationId}': {
    summary: 'Cancels or reschedules a scheduled run (token or console member with edit access); approves or rejects a paused one (console only)',
    description:
      '`cancel` (no other field) and `reschedule` (`runAt` or `delaySeconds`, the scheduling rules) apply to an async run that is still SCHEDULED; the token that started it, or a console member with edit access, may send them. ' +
      '`approve` and `reject` (optional `comment`) resume an automation paused at an Approval node; only a signed-in member with edit access may. Answers the invocation after the change.',
    tag: 'Invocations',
    requestExample: REQUESTS.modifyInvocation,
    responses: {
      200: { description: 'The full invocation after the change.', schema: 'Invocation', example: ANSWERS.rescheduled },
      ...tokenPipeline({ body: true }),
      400: {
        ...versionError,
        schema: { anyOf: [ref('Error'), ref('VersionError')] },
        messages: [RUN_MESSAGES.actionRequired, RUN_MESSAGES.actionInvalid, RUN_MESSAGES.cancelTakesNoFields, RUN_MESSAGES.rescheduleNeedsTime, APPROVAL_MESSAGES.commentInvalid, APPROVAL_MESSAGES.takesComment, ...SCHEDULING_MESSAGES, ...bodyMessages],
      },
      401: { description: 'No token, or a bad one; or a console JWT that does not verify.', messages: [API_ERRORS.missingToken, API_ERRORS.invalidToken, CONSOLE_ERRORS.invalid] },
      403: {
        description: 'Another token started the run; the token lacks the scope; a VIEWER; an API token asking to approve or reject.',
        messages: [API_ERRORS.tokenMismatch, API_ERRORS.insufficientScope, API_ERRORS.unauthorized, API_ERRORS.externalApiDisabled],
      },
      404: { description: 'No such run (or organization, for a console member).', messages: [API_ERRORS.invocationNotFound, ACCESS_ERRORS.organizationNotFound, API_ERRORS.projectNotFound] },
      409: { description: 'The run is not in a state the action applies to.', messages: [RUN_MESSAGES.notAsync, RUN_MESSAGES.notScheduled, RUN_MESSAGES.noLongerScheduled, APPROVAL_MESSAGES.notAwaitingApproval] },
      502: { description: 'The decision was recorded but the automation did not resume.', messages: [APPROVAL_MESSAGES.notResumed] },
      503: { ...unavailable('invocation')[503]!, messages: [SERVICE_UNAVAILABLE.invocation, RUN_MESSAGES.schedulerServiceUnavailable, API_ERRORS.serviceTemporarilyUnavailable] },
    },
  },

  // ---- Console: runs, the same data as the token routes.
  'GET /v1/orgs/{orgId}/external-invocations/logs': {
    summary: 'Run logs, newest first, with keyset pagination',
    description: 'The organization’s runs (or one project’s), newest first, filtered by status, target, mode, trigger source, time or an id; follow `nextCursor` for the next page. Dashboard only: a console JWT of any member.',
    tag: 'Run logs',
    query: logsQuery,
    responses: {
      200: { description: 'A page of runs (`nextCursor` null on the last).', schema: 'RunLogPage', example: ANSWERS.runLogPage },
      ...withMessages(consolePipeline(), 400, logQueryMessages),
      ...dashboardOnly,
      ...unavailable('invocation'),
    },
  },
  'GET /v1/orgs/{orgId}/external-invocations/metrics': {
    summary: 'Invocation health: counts, durations, callbacks, a series and recent runs',
    description: 'Counts by outcome, median and 95th percentile durations, callback deliveries, runs per hour or day, and the ten most recent runs, over a window (the last 24 h by default); with `projectId`, also `schedules`: each Schedule trigger’s runs and their lateness (`startedAt − scheduledFor`). Dashboard only: a console JWT of any member.',
    tag: 'Run logs',
    query: [
      { name: 'projectId', schema: uuid, description: 'Only this project’s runs.' },
      { name: 'from', schema: { type: 'string', format: 'date-time' }, description: 'Start of the window (default: 24 h before `to`).' },
      { name: 'to', schema: { type: 'string', format: 'date-time' }, description: 'End of the window (default: now).' },
      { name: 'bucket', schema: { type: 'string', enum: ['hour', 'day'] }, description: 'Size of the series’ buckets (default: hour up to 48 h, else day).' },
    ],
    responses: {
      200: { description: 'The metrics (default: the last 24 h).', schema: 'InvocationMetrics', example: ANSWERS.metrics },
      ...withMessages(consolePipeline(), 400, logQueryMessages),
      ...dashboardOnly,
      ...unavailable('invocation'),
    },
  },
};
