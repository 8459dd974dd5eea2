import { QUOTA_EXCEEDED_MESSAGE, QUOTA_UNAVAILABLE_MESSAGE } from '@runline/contracts';
import { BULK_REPLAY_MESSAGES } from '../commands/bulk-replay-dead-letter-events.handler.js';
import { MAX_IDEMPOTENCY_KEY_LENGTH } from '../commands/start-run.handler.js';
import { POLLING_NOT_FOUND } from '../commands/remove-polling-trigger.handler.js';
import { DEAD_LETTER_REPLAY_MESSAGES } from '../commands/replay-dead-letter-event.handler.js';
import { API_ERRORS } from '../errors/error-messages.js';
import { BODY_ERRORS } from '../http/body-parsing.js';
import { ACCESS_ERRORS } from '../http/console/console-access.js';
import { CONSOLE_ERRORS } from '../http/console/console-auth.guard.js';
import { DEAD_LETTER_LIST_MESSAGES } from '../queries/list-dead-letter-events.handler.js';
import { PROJECT_READ_ERRORS } from '../queries/project-views.js';
import { REQUEST_EXAMPLE_ERRORS } from '../queries/build-request-example.handler.js';
import { RUN_LOG_QUERY_MESSAGES, RUN_MODES, RUN_STATUSES, RUN_TARGET_TYPES, RUN_TRIGGER_SOURCES } from '../queries/run-log-query.js';
import { SERVICE_UNAVAILABLE } from '../service-client/service-client.js';
import { TEMPLATE_ERRORS } from '../templates/template-rules.js';
import { listOf, ref, uuid } from './answer-schemas.js';
import { ANSWERS, REQUESTS } from './examples.js';

type Schema = Record<string, unknown>;

/** One documented answer of a route: what it means, its body's schema (a component name or a schema), the messages it can carry. */
export interface AnswerDescription {
  description: string;
  /** A name in ANSWER_SCHEMAS, or a schema; errors default to `Error`; omitted with `noBody`. */
  schema?: string | Schema;
  messages?: readonly string[];
  noBody?: boolean;
  headers?: readonly string[];
  /** A realistic body (examples.ts); the document's build requires one for every success answer with a body. */
  example?: unknown;
}

export interface QueryParameter {
  name: string;
  /** `query` unless said. */
  in?: 'query' | 'header';
  schema: Schema;
  description?: string;
  required?: boolean;
}

/** The document's tags, in the order a reader meets them, each with what it groups. */
export const TAG_DESCRIPTIONS = {
  Runs:
    'Start runs of a chatbot or automation project with an API token. The sync endpoints wait for the run and answer its result; the async ones answer 202 at once, ' +
    'can hold the run until `runAt` or for `delaySeconds`, and report the end to a signed callback. Rate limited per token and endpoint, counted against the monthly quota; ' +
    'send `x-idempotency-key` so that a retry never starts a second run.',
  Invocations: 'One run (an invocation): read it until its status is final; cancel or reschedule it while it is SCHEDULED; approve or reject it at an Approval node.',
  Polling: 'Polling triggers: the service calls your endpoint on a timer and runs the chatbot project’s flow once per new item (recognised by `dedupeField`).',
  'Dead letters':
    'Events that could not be delivered or run (a failed poll, a polled item whose run failed, an automation run that failed after its retries, an inbound delivery that failed the trigger check), kept for replay, at most once each.',
  Organizations: 'Console: organizations, their members and roles, and the plan (monthly quota, rate limit, renewal day).',
  Projects: 'Console: chatbot and automation projects, their definitions (a draft and the published version) and their API settings (master switch, default policies, default callback, rate limit).',
  'API tokens': 'Console: the project’s API tokens, each with scopes; the token is shown once when issued, then listed by prefix with its last use, until revoked.',
  'Run logs': 'Console: the organization’s runs with filters and keyset pagination, and the invocation health (counts, durations, callbacks, a series of runs over time).',
  Templates: 'Console: saved request bodies for the run endpoints, and the request example builder (a ready request with curl, JavaScript and Python snippets).',
  'Inbound hooks':
    'URLs that start a run of the project for every signed delivery (`POST /v1/hooks/{id}`), and managed subscriptions that create the webhook at Stripe, Shopify or GitHub for you.',
} as const;

/** What the code cannot say about a route: its purpose, its query, and every answer it documents. */
export interface RouteDescription {
  summary: string;
  /** What a reader needs beyond the summary: who may call, what it does, what to watch for. */
  description: string;
  tag: keyof typeof TAG_DESCRIPTIONS;
  query?: readonly QueryParameter[];
  /** Only for a body the handler checks itself (no DTO class). */
  requestBody?: Schema;
  /** A realistic request body (examples.ts); the document's build requires one for every operation with a body. */
  requestExample?: Record<string, unknown>;
  responses: Readonly<Record<number, AnswerDescription>>;
}

// Answers many routes share, in the order the pipeline can produce them.
const unavailable = (...services: Array<keyof typeof SERVICE_UNAVAILABLE>): Record<number, AnswerDescription> => ({
  503: {
    description: 'A service the gateway needs (or its own database) did not answer; retry shortly.',
    messages: [...services.map((service) => SERVICE_UNAVAILABLE[service]), API_ERRORS.serviceTemporarilyUnavailable],
  },
});

const versionError = {
  description:
    'A request to another API version (`/v2/orgs/…`) gets `VersionError` (`code` UNSUPPORTED_API_VERSION, `supportedVersions`); on this path, the messages below.',
};

const bodyErrors: Record<number, AnswerDescription> = {
  413: { description: 'The body is larger than the gateway accepts.', messages: ['Request body too large'] },
  415: { description: 'The body is not sent as JSON.', messages: [BODY_ERRORS.notJsonType] },
};

const bodyMessages = [BODY_ERRORS.notJson, BODY_ERRORS.notObject, BODY_ERRORS.tooDeep, 'a field that fails its rule, named (`name must be a string`)'];

/** The token pipeline (DESIGN section 5): token, project, switch, type, scope. */
function tokenPipeline(options: { typeMessages?: string[]; body?: boolean; rateLimited?: boolean } = {}): Record<number, AnswerDescription> {
  const answers: Record<number, AnswerDescription> = {
    400: { ...versionError, schema: { anyOf: [ref('Error'), ref('VersionError')] }, messages: [...(options.typeMessages ?? []), ...(options.body ? bodyMessages : [])] },
    401: { description: 'No token, a malformed, unknown, revoked or expired one, or one of another project.', messages: [API_ERRORS.missingToken, API_ERRORS.invalidToken] },
    403: { description: 'The project switched its external API off, or the token lacks the scope.', messages: [API_ERRORS.externalApiDisabled, API_ERRORS.insufficientScope] },
    404: { description: 'No such project in this organization (or it was deleted).', messages: [API_ERRORS.projectNotFound] },
    ...(options.body ? bodyErrors : {}),
  };
  if (options.rateLimited) answers[429] = { description: 'The token used up its rate limit.', messages: [API_ERRORS.rateLimitExceeded], headers: ['retry-after'] };
  return answers;
}

/** The console's checks (DESIGN section 5): JWT, membership (404), role (403), body. */
function consolePipeline(options: { level?: 'member' | 'edit' | 'owner' | 'platform-admin'; org?: boolean; project?: boolean; body?: boolean } = {}): Record<number, AnswerDescription> {
  const level = options.level ?? 'member';
  const forbidden = level === 'platform-admin' ? [ACCESS_ERRORS.platformAdminOnly] : level === 'member' ? [] : [ACCESS_ERRORS.forbidden[level]];
  const answers: Record<number, AnswerDescription> = {
    400: { ...versionError, schema: { anyOf: [ref('Error'), ref('VersionError')] }, messages: options.body ? bodyMessages : [] },
    401: { description: 'No console JWT, or one that does not verify or has expired.', messages: [CONSOLE_ERRORS.missing, CONSOLE_ERRORS.invalid] },
    ...(options.body ? bodyErrors : {}),
  };
  if (forbidden.length) answers[403] = { description: 'The member’s role is too low for this.', messages: forbidden };
  if (options.org !== false) {
    answers[404] = {
      description: 'An organization the caller is not a member of (whatever exists there), or a project outside it.',
      messages: options.project ? [ACCESS_ERRORS.organizationNotFound, ACCESS_ERRORS.projectNotFound] : [ACCESS_ERRORS.organizationNotFound],
    };
  }
  return answers;
}

const TYPE_MESSAGES = {
  bots: [API_ERRORS.botChatbotOnly, API_ERRORS.typeNotSupported],
  flows: [API_ERRORS.automationsUseAutomationApi, API_ERRORS.typeNotSupported],
  automations: [API_ERRORS.automationOnly, API_ERRORS.typeNotSupported],
};

const SCHEDULING_MESSAGES = [
  API_ERRORS.schedulingBothFields,
  API_ERRORS.runAtInvalid,
  API_ERRORS.runAtNotInFuture,
  API_ERRORS.runAtTooFar,
  API_ERRORS.delaySecondsInvalid,
  API_ERRORS.delaySecondsTooLarge,
];

const idempotencyHeader: QueryParameter[] = [
  { name: 'x-idempotency-key', in: 'header', schema: { type: 'string' }, description: `A retry with the same key returns the same run instead of starting another (a key over ${MAX_IDEMPOTENCY_KEY_LENGTH} characters is ignored).` },
];

const SCOPE_OF = { bots: 'bot:invoke', flows: 'flow:trigger', automations: 'automation:trigger' } as const;

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
    query: idempotencyHeader,
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
              description: kind === 'bots'
                ? 'A repeat of an idempotency key whose run has finished: that run, with `idempotentReplay` true.'
                : 'A dry run (`dryRun: true`): checked, not run; `result.validation` says what the trigger expects. Or a repeat of an idempotency key whose run has finished (`idempotentReplay` true).',
              schema: 'RunAnswer',
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
        messages: mode === 'sync' ? [API_ERRORS.syncTriggerFailed] : [API_ERRORS.runNotStarted],
      },
      503: { description: 'The invocation service or the quota check did not answer; retry shortly.', messages: [API_ERRORS.invocationServiceUnavailable, QUOTA_UNAVAILABLE_MESSAGE, API_ERRORS.serviceTemporarilyUnavailable] },
    },
  };
}

const deadLetterQuery: QueryParameter[] = [
  { name: 'source', schema: { type: 'string' }, description: 'Only events from this source.' },
  { name: 'unresolvedOnly', schema: { type: 'string', enum: ['true', 'false'] }, description: 'true: only events not yet replayed.' },
  { name: 'limit', schema: { type: 'integer', minimum: 1, maximum: 200, default: 50 }, description: 'Page size.' },
  { name: 'offset', schema: { type: 'integer', minimum: 0, default: 0 }, description: 'Events to skip.' },
];
const deadLetterListErrors = [DEAD_LETTER_LIST_MESSAGES.limitInvalid, DEAD_LETTER_LIST_MESSAGES.offsetInvalid, DEAD_LETTER_LIST_MESSAGES.unresolvedOnlyInvalid];

function tokenDeadLetters(kind: 'flows' | 'automations'): Record<string, RouteDescription> {
  const path = `/v1/orgs/{orgId}/${kind}/{projectId}/dead-letters`;
  const list = tokenPipeline({ typeMessages: TYPE_MESSAGES[kind] });
  const replay = tokenPipeline({ typeMessages: TYPE_MESSAGES[kind] });
  return {
    [`GET ${path}`]: {
      summary: `Dead-letter events of the ${kind === 'flows' ? 'chatbot project' : 'automation project'}, newest first`,
      description: `Lists the project’s dead letters, newest first, a page at a time (\`total\` counts them all). Caller: an API token of the project with the \`${SCOPE_OF[kind]}\` scope.`,
      tag: 'Dead letters',
      query: deadLetterQuery,
      responses: { 200: { description: 'A page of events.', schema: 'DeadLetterPage', example: ANSWERS.deadLetterPage }, ...list, 400: { ...list[400]!, messages: [...list[400]!.messages!, ...deadLetterListErrors] }, ...unavailable('deadLetter') },
    },
    [`POST ${path}`]: {
      summary: 'Replays one dead-letter event (`?id=`)',
      description:
        `Runs the project again with the event’s stored payload; an event is replayed at most once, whether or not the replay succeeds. Do not replay a failed poll: the next poll fetches again by itself. ` +
        `Caller: an API token of the project with the \`${SCOPE_OF[kind]}\` scope.`,
      tag: 'Dead letters',
      query: [{ name: 'id', schema: uuid, description: 'The event to replay.' }],
      responses: {
        200: { description: 'Replayed.', schema: 'Success', example: ANSWERS.success },
        ...replay,
        400: { ...replay[400]!, messages: [...replay[400]!.messages!, DEAD_LETTER_REPLAY_MESSAGES.idRequired] },
        422: { description: 'Not found, already replayed, or the replay failed (with its reason).', messages: [DEAD_LETTER_REPLAY_MESSAGES.notFound, DEAD_LETTER_REPLAY_MESSAGES.alreadyReplayed] },
        ...unavailable('deadLetter', 'invocation'),
      },
    },
  };
}

const projectRoute = '/v1/orgs/{orgId}/projects/{projectId}';
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
const dashboardOnly = { 403: { description: 'A real API token gets no data here.', messages: [API_ERRORS.unauthorized] } };

const templateBody: AnswerDescription = { description: '', messages: [TEMPLATE_ERRORS.bodyTooLarge, TEMPLATE_ERRORS.tooMany, 'endpoint … is not available for … projects', 'A template must not hold secrets (found: …)'] };

const withMessages = (pipeline: Record<number, AnswerDescription>, status: number, messages: string[]): Record<number, AnswerDescription> => ({
  ...pipeline,
  [status]: { ...pipeline[status]!, messages: [...(pipeline[status]?.messages ?? []), ...messages] },
});

/**
 * THE route description table, keyed by `METHOD /path` as the code declares the route
 * (gateway-routes.ts). A route without an entry here fails the document's build, and the
 * route-coverage test (e2e/openapi.e2e-spec.ts) compares the document with the routes the
 * running gateway registered.
 */
export const ROUTE_DESCRIPTIONS: Readonly<Record<string, RouteDescription>> = {
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
        messages: [API_ERRORS.actionRequired, API_ERRORS.actionInvalid, API_ERRORS.cancelTakesNoFields, API_ERRORS.rescheduleNeedsTime, API_ERRORS.approvalCommentInvalid, API_ERRORS.approvalTakesComment, ...SCHEDULING_MESSAGES, ...bodyMessages],
      },
      401: { description: 'No token, or a bad one; or a console JWT that does not verify.', messages: [API_ERRORS.missingToken, API_ERRORS.invalidToken, CONSOLE_ERRORS.invalid] },
      403: {
        description: 'Another token started the run; the token lacks the scope; a VIEWER; an API token asking to approve or reject.',
        messages: [API_ERRORS.tokenMismatch, API_ERRORS.insufficientScope, API_ERRORS.unauthorized, API_ERRORS.externalApiDisabled],
      },
      404: { description: 'No such run (or organization, for a console member).', messages: [API_ERRORS.invocationNotFound, ACCESS_ERRORS.organizationNotFound, API_ERRORS.projectNotFound] },
      409: { description: 'The run is not in a state the action applies to.', messages: [API_ERRORS.notAsync, API_ERRORS.notScheduled, API_ERRORS.noLongerScheduled, API_ERRORS.notAwaitingApproval] },
      502: { description: 'The decision was recorded but the automation did not resume.', messages: [API_ERRORS.approvalNotResumed] },
      503: { ...unavailable('invocation')[503]!, messages: [SERVICE_UNAVAILABLE.invocation, API_ERRORS.schedulerServiceUnavailable, API_ERRORS.serviceTemporarilyUnavailable] },
    },
  },

  'POST /v1/orgs/{orgId}/flows/{projectId}/polling': {
    summary: 'Registers (or updates, by pollKey) a polling trigger',
    description:
      'The service GETs `pollEndpoint` (with `authHeader` as Authorization) every `intervalMs`, the first poll straight away, and runs the flow once per item whose `dedupeField` value is new; the item’s fields plus `source` and `_pollKey` are the payload. ' +
      'A failed poll, and an item whose run fails, become dead letters. Registering a `pollKey` again updates it. Caller: an API token of the chatbot project with the `flow:trigger` scope.',
    tag: 'Polling',
    requestExample: REQUESTS.registerPolling,
    responses: {
      201: { description: 'The trigger as saved.', schema: obj1(ref('PollingTrigger')), example: ANSWERS.pollingTriggerSaved },
      ...tokenPipeline({ typeMessages: TYPE_MESSAGES.flows, body: true }),
      ...unavailable('polling'),
    },
  },
  'GET /v1/orgs/{orgId}/flows/{projectId}/polling': {
    summary: 'Lists the project’s polling triggers (or the one `pollKey` names)',
    description: 'Each trigger with its last poll, last seen value and next poll. `authHeader` is included: treat the answer as sensitive. Caller: an API token of the chatbot project with the `flow:trigger` scope.',
    tag: 'Polling',
    query: [{ name: 'pollKey', schema: { type: 'string' }, description: 'Only the trigger with this key.' }],
    responses: {
      200: { description: 'The triggers.', schema: listOf(ref('PollingTrigger')), example: ANSWERS.pollingTriggers },
      ...tokenPipeline({ typeMessages: TYPE_MESSAGES.flows }),
      ...unavailable('polling'),
    },
  },
  'DELETE /v1/orgs/{orgId}/flows/{projectId}/polling': {
    summary: 'Removes the polling trigger `pollKey` names',
    description: 'Stops polling: no further poll is made for this key. Caller: an API token of the chatbot project with the `flow:trigger` scope.',
    tag: 'Polling',
    query: [{ name: 'pollKey', schema: { type: 'string' }, required: true, description: 'The trigger to remove.' }],
    responses: {
      200: { description: 'Removed.', schema: 'Success', example: ANSWERS.success },
      ...withMessages(tokenPipeline({ typeMessages: TYPE_MESSAGES.flows }), 400, ['pollKey is required']),
      404: { description: 'No such project, or no trigger with that pollKey.', messages: [API_ERRORS.projectNotFound, POLLING_NOT_FOUND] },
      ...unavailable('polling'),
    },
  },
  ...tokenDeadLetters('flows'),
  ...tokenDeadLetters('automations'),

  // ---- Inbound hooks (DESIGN section 9): any method is routed, only POST is accepted.
  'ALL /v1/hooks/{id}': {
    summary: 'Receives a signed delivery and starts a run of the hook’s project',
    description:
      'Starts an async run of the hook’s project with the JSON body (a chatbot’s flow with the top-level fields as payload, an automation’s workflow with the body as payload) and answers 202. ' +
      'Signed with the hook’s secret: `X-Runline-Signature: sha256=<hex HMAC-SHA256>` of the raw body, or of `<timestamp>.<raw body>` with `X-Runline-Timestamp` (within 300 s). ' +
      'A managed subscription’s `endpoint` is this URL too: its provider signs with its own scheme (`Stripe-Signature`, `X-Shopify-Hmac-Sha256`, `X-Hub-Signature-256`), and only the subscribed events start runs. ' +
      'A repeated `X-Runline-Delivery` within 24 h answers 409 and runs nothing. A body that fails the trigger check answers 422 and is kept as a dead letter. ' +
      `Only POST is accepted: any other method on this URL answers 405 \`${API_ERRORS.webhookMethodNotAllowed}\` with \`Allow: POST\` (those methods are not listed as operations, having no successful answer).`,
    tag: 'Inbound hooks',
    requestExample: REQUESTS.hookDelivery,
    responses: {
      202: { description: 'Accepted: the run started.', schema: 'HookAccepted', example: ANSWERS.hookAccepted },
      400: { description: 'The body is not JSON.', messages: [BODY_ERRORS.notJson, BODY_ERRORS.notObject] },
      401: { description: 'Missing or wrong signature, or a stale timestamp.', messages: [API_ERRORS.webhookInvalidSignature, API_ERRORS.webhookStaleTimestamp] },
      403: { description: 'The project switched its external API off.', messages: [API_ERRORS.externalApiDisabled] },
      404: { description: 'No such hook.', messages: [API_ERRORS.webhookNotFound] },
      409: { description: 'This `X-Runline-Delivery` was received within 24 h: the first run’s `invocationId`.', schema: 'HookRepeated', messages: [API_ERRORS.webhookDeliveryRepeated] },
      410: { description: 'The hook was revoked.', messages: [API_ERRORS.webhookRevoked] },
      413: { description: 'Body over 256 KiB.', messages: [API_ERRORS.webhookPayloadTooLarge] },
      422: { description: 'The trigger check failed; the body is kept as a dead letter.', schema: 'HookRejected' },
      429: { description: 'The hook’s rate limit, or the organization’s quota.', schema: { anyOf: [ref('Error'), ref('QuotaError')] }, messages: [API_ERRORS.rateLimitExceeded, QUOTA_EXCEEDED_MESSAGE] },
      500: { description: 'The run could not be started; the sender retries.', messages: [API_ERRORS.runNotStarted] },
      ...unavailable('webhook', 'invocation'),
    },
  },

  // ---- Console: organizations and plans.
  'POST /v1/orgs': {
    summary: 'Creates an organization; the caller becomes its OWNER',
    description: 'Any signed-in user (console JWT) may create an organization; they become its OWNER.',
    tag: 'Organizations',
    requestExample: REQUESTS.createOrganization,
    responses: { 201: { description: 'Created.', schema: 'Organization', example: ANSWERS.organization }, ...consolePipeline({ org: false, body: true }), ...unavailable() },
  },
  'GET /v1/orgs': {
    summary: 'The caller’s organizations, with the caller’s role',
    description: 'Every organization the signed-in user is a member of, with their role in it (OWNER, EDITOR or VIEWER).',
    tag: 'Organizations',
    responses: { 200: { description: 'The organizations.', schema: listOf(ref('OrganizationRow')), example: ANSWERS.organizations }, ...consolePipeline({ org: false }), ...unavailable() },
  },
  'PUT /v1/orgs/{orgId}/plan': {
    summary: 'Sets the organization’s plan (platform-admin)',
    description: 'Sets the monthly quota, the plan’s rate limit and the renewal day; every field is required, null means “not limited by the plan”. Caller: a platform administrator (the `platform-admin` role in the console JWT).',
    tag: 'Organizations',
    requestExample: REQUESTS.setPlan,
    responses: { 200: { description: 'The plan as set.', schema: 'Plan', example: ANSWERS.plan }, ...consolePipeline({ level: 'platform-admin', body: true }), ...unavailable() },
  },
  'GET /v1/orgs/{orgId}/plan': {
    summary: 'The plan and this period’s usage (any member)',
    description: 'The plan’s limits, the start of the current billing period and the runs counted in it so far (dry runs are not counted). Caller: any member of the organization.',
    tag: 'Organizations',
    responses: { 200: { description: 'Plan and usage.', schema: 'PlanUsage', example: ANSWERS.planUsage }, ...consolePipeline(), ...unavailable('invocation') },
  },
  'POST /v1/orgs/{orgId}/members': {
    summary: 'Adds a member (OWNER)',
    description: 'Adds a user (by their sign-in subject) with a role: OWNER, EDITOR (edit access to every project) or VIEWER (read only). Caller: an OWNER of the organization.',
    tag: 'Organizations',
    requestExample: REQUESTS.addMember,
    responses: {
      201: { description: 'Added.', schema: 'Member', example: ANSWERS.member },
      ...consolePipeline({ level: 'owner', body: true }),
      409: { description: 'The user already is a member.', messages: ['User is already a member of this organization'] },
      ...unavailable(),
    },
  },

  // ---- Console: projects.
  'POST /v1/orgs/{orgId}/projects': {
    summary: 'Creates a project',
    description: 'Creates an empty chatbot or automation project, with the default API settings; save a definition and publish it before its runs can start. Caller: a member with edit access (OWNER or EDITOR).',
    tag: 'Projects',
    requestExample: REQUESTS.createProject,
    responses: { 201: { description: 'Created.', schema: 'ProjectCreated', example: ANSWERS.projectCreated }, ...consolePipeline({ level: 'edit', body: true }), ...unavailable() },
  },
  'GET /v1/orgs/{orgId}/projects': {
    summary: 'The organization’s projects',
    description: 'Every live project of the organization with its type and published version. Caller: any member.',
    tag: 'Projects',
    responses: { 200: { description: 'The projects.', schema: listOf(ref('ProjectSummary')), example: ANSWERS.projects }, ...consolePipeline(), ...unavailable() },
  },
  [`GET ${projectRoute}`]: {
    summary: 'One project',
    description: 'The project with its published and draft versions. Caller: any member.',
    tag: 'Projects',
    responses: { 200: { description: 'The project.', schema: 'Project', example: ANSWERS.project }, ...consolePipeline({ project: true }), ...unavailable() },
  },
  [`DELETE ${projectRoute}`]: {
    summary: 'Deletes the project (OWNER); its tokens and polls stop',
    description: 'Deletes the project: its API tokens are refused from then on and its polling triggers stop. Caller: an OWNER.',
    tag: 'Projects',
    responses: { 204: { description: 'Deleted.', noBody: true }, ...consolePipeline({ level: 'owner', project: true }), ...unavailable() },
  },
  [`GET ${projectRoute}/definition`]: {
    summary: 'The draft or the published definition',
    description: 'The definition of one stage (`stage=draft` or `stage=published`) with its version. Caller: any member.',
    tag: 'Projects',
    query: [{ name: 'stage', schema: { type: 'string', enum: ['draft', 'published'] }, required: true, description: 'Which definition.' }],
    responses: {
      200: { description: 'That stage (`version` and `definition` null when it has nothing yet).', schema: 'DefinitionStage', example: ANSWERS.definitionStage },
      ...withMessages(consolePipeline({ project: true }), 400, [PROJECT_READ_ERRORS.badStage]),
      ...unavailable(),
    },
  },
  [`PUT ${projectRoute}/definition`]: {
    summary: 'Saves the draft definition',
    description: 'Checks the definition (a chatbot’s `bot` and `flow`, an automation’s `workflow`) and saves it as the new draft; a definition with problems answers 400 with each in `details`. Publishing makes it the one runs use. Caller: a member with edit access.',
    tag: 'Projects',
    requestExample: REQUESTS.saveDefinition,
    responses: {
      200: { description: 'Saved; `draftVersion` grew by one.', schema: 'DraftSaved', example: ANSWERS.draftSaved },
      ...consolePipeline({ level: 'edit', project: true, body: true }),
      400: { ...versionError, schema: { anyOf: [ref('DefinitionError'), ref('VersionError')] }, messages: [...bodyMessages, 'the definition’s problems, summarized (`details` lists them)'] },
      ...unavailable(),
    },
  },
  [`POST ${projectRoute}/publish`]: {
    summary: 'Publishes the draft',
    description: 'Makes the draft the published definition: the runs that start from now on use it. Caller: a member with edit access.',
    tag: 'Projects',
    responses: {
      200: { description: 'Published.', schema: 'Published', example: ANSWERS.published },
      ...consolePipeline({ level: 'edit', project: true }),
      409: { description: 'There is no draft to publish.', messages: ['There is no draft definition to publish'] },
      ...unavailable(),
    },
  },
  [`GET ${projectRoute}/api-settings`]: {
    summary: 'The project’s API settings',
    description: 'The master switch (Enable External API), the default enrollment and on-error policies, the default callback and the project’s rate limit. The callback secret is never shown, only whether it is set. Caller: any member.',
    tag: 'Projects',
    responses: {
      200: { description: 'The settings (the callback secret only as `defaultCallbackSecretSet`).', schema: 'ApiSettings', example: ANSWERS.apiSettings },
      ...consolePipeline({ project: true }),
      ...unavailable(),
    },
  },
  [`PATCH ${projectRoute}/api-settings`]: {
    summary: 'Changes the project’s API settings',
    description: 'Changes the settings sent and leaves the others; null clears the default callback, its secret and the rate limit (back to the plan’s). Switching the external API off refuses every token call with 403 at once. Caller: a member with edit access.',
    tag: 'Projects',
    requestExample: REQUESTS.updateApiSettings,
    responses: { 200: { description: 'The settings after the change.', schema: 'ApiSettings', example: ANSWERS.apiSettings }, ...consolePipeline({ level: 'edit', project: true, body: true }), ...unavailable() },
  },
  [`POST ${projectRoute}/api-tokens`]: {
    summary: 'Issues an API token (shown once)',
    description: 'Issues a token of this project with the given scopes (and an optional expiry). The token is in this answer only; it is stored hashed. Caller: a member with edit access.',
    tag: 'API tokens',
    requestExample: REQUESTS.createApiToken,
    responses: { 201: { description: 'Issued.', schema: 'IssuedApiToken', example: ANSWERS.issuedToken }, ...consolePipeline({ level: 'edit', project: true, body: true }), ...unavailable() },
  },
  [`GET ${projectRoute}/api-tokens`]: {
    summary: 'The project’s live tokens, with their last use',
    description: 'Each token that is not revoked, by name and prefix, with its scopes, expiry and last use; never the token itself. Caller: any member.',
    tag: 'API tokens',
    responses: { 200: { description: 'The tokens (never the secrets).', schema: listOf(ref('ApiToken')), example: ANSWERS.tokens }, ...consolePipeline({ project: true }), ...unavailable() },
  },
  [`DELETE ${projectRoute}/api-tokens/{tokenId}`]: {
    summary: 'Revokes a token; it is refused on its next call',
    description: 'Revokes the token: its next call gets 401. Caller: a member with edit access.',
    tag: 'API tokens',
    responses: {
      204: { description: 'Revoked.', noBody: true },
      ...consolePipeline({ level: 'edit', project: true }),
      404: { description: 'No such organization, project or token.', messages: [ACCESS_ERRORS.organizationNotFound, ACCESS_ERRORS.projectNotFound, 'API token not found'] },
      ...unavailable(),
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
    description: 'Counts by outcome, median and 95th percentile durations, callback deliveries, runs per hour or day, and the ten most recent runs, over a window (the last 24 h by default). Dashboard only: a console JWT of any member.',
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
  [`POST ${projectRoute}/polling-triggers`]: {
    summary: 'Registers (or updates) a polling trigger',
    description: 'The console’s form of POST /flows/{projectId}/polling: the same trigger, registered by a member with edit access instead of a token.',
    tag: 'Polling',
    requestExample: REQUESTS.registerPolling,
    responses: {
      201: { description: 'The trigger as saved.', schema: obj1(ref('PollingTrigger')), example: ANSWERS.pollingTriggerSaved },
      ...consolePipeline({ level: 'edit', project: true, body: true }),
      ...unavailable('polling'),
    },
  },
  [`GET ${projectRoute}/polling-triggers`]: {
    summary: 'The project’s polling triggers',
    description: 'Each trigger with its last poll, last seen value and next poll (`authHeader` included). Caller: any member.',
    tag: 'Polling',
    query: [{ name: 'pollKey', schema: { type: 'string' }, description: 'Only the trigger with this key.' }],
    responses: { 200: { description: 'The triggers.', schema: listOf(ref('PollingTrigger')), example: ANSWERS.pollingTriggers }, ...consolePipeline({ project: true }), ...unavailable('polling') },
  },
  [`GET ${projectRoute}/polling-triggers/{pollKey}`]: {
    summary: 'One polling trigger',
    description: 'The trigger with this `pollKey`, as a list of at most one. Caller: any member.',
    tag: 'Polling',
    responses: {
      200: { description: 'The trigger (a list of at most one).', schema: listOf(ref('PollingTrigger')), example: ANSWERS.pollingTriggers },
      ...consolePipeline({ project: true }),
      ...unavailable('polling'),
    },
  },
  [`DELETE ${projectRoute}/polling-triggers/{pollKey}`]: {
    summary: 'Removes a polling trigger',
    description: 'Stops polling for this key. Caller: a member with edit access.',
    tag: 'Polling',
    responses: {
      200: { description: 'Removed.', schema: 'Success', example: ANSWERS.success },
      ...consolePipeline({ level: 'edit', project: true }),
      404: { description: 'No such organization, project or trigger.', messages: [ACCESS_ERRORS.organizationNotFound, ACCESS_ERRORS.projectNotFound, POLLING_NOT_FOUND] },
      ...unavailable('polling'),
    },
  },
  [`GET ${projectRoute}/dead-letters`]: {
    summary: 'The project’s dead-letter events',
    description: 'The console’s form of GET /flows/{projectId}/dead-letters, for chatbot and automation projects alike. Caller: any member.',
    tag: 'Dead letters',
    query: deadLetterQuery,
    responses: {
      200: { description: 'A page of events.', schema: 'DeadLetterPage', example: ANSWERS.deadLetterPage },
      ...withMessages(consolePipeline({ project: true }), 400, deadLetterListErrors),
      ...unavailable('deadLetter'),
    },
  },
  [`POST ${projectRoute}/dead-letters/replay`]: {
    summary: 'Replays every unreplayed event matching the filter, each at most once (`dryRun` counts only)',
    description: 'Replays the events not yet replayed that match `filter` (source, target type, time), each at most once; with `dryRun: true` it only counts them. Events still being replayed are `pending`, those left for a next call `remaining`. Caller: a member with edit access.',
    tag: 'Dead letters',
    requestBody: {
      type: 'object',
      properties: {
        filter: { type: 'object', properties: { source: { type: 'string' }, targetType: { type: 'string' }, from: { type: 'string', format: 'date-time' }, to: { type: 'string', format: 'date-time' } }, additionalProperties: false },
        dryRun: { type: 'boolean' },
      },
      required: ['filter'],
      additionalProperties: false,
    },
    requestExample: REQUESTS.bulkReplay,
    responses: {
      200: { description: '`{matched}` for a dry run, else the counts.', schema: 'BulkReplay', example: ANSWERS.bulkReplay },
      ...withMessages(consolePipeline({ level: 'edit', project: true, body: true }), 400, [
        BULK_REPLAY_MESSAGES.filterRequired,
        BULK_REPLAY_MESSAGES.filterNotObject,
        BULK_REPLAY_MESSAGES.sourceInvalid,
        BULK_REPLAY_MESSAGES.targetTypeInvalid,
        BULK_REPLAY_MESSAGES.fromAfterTo,
        BULK_REPLAY_MESSAGES.dryRunInvalid,
      ]),
      ...unavailable('deadLetter', 'invocation'),
    },
  },
  [`POST ${projectRoute}/dead-letters/{id}/replay`]: {
    summary: 'Replays one dead-letter event',
    description: 'Runs the project again with the event’s stored payload, at most once per event. Caller: a member with edit access.',
    tag: 'Dead letters',
    responses: {
      200: { description: 'Replayed.', schema: 'Success', example: ANSWERS.success },
      ...consolePipeline({ level: 'edit', project: true }),
      422: { description: 'Not found, already replayed, or the replay failed (with its reason).', messages: [DEAD_LETTER_REPLAY_MESSAGES.notFound, DEAD_LETTER_REPLAY_MESSAGES.alreadyReplayed] },
      ...unavailable('deadLetter', 'invocation'),
    },
  },

  // ---- Console: the template library and the request example builder.
  [`GET ${projectRoute}/templates`]: {
    summary: 'The project’s request templates',
    description: 'Saved request bodies, each for one run endpoint of the project’s type. Caller: any member.',
    tag: 'Templates',
    responses: { 200: { description: 'The templates.', schema: listOf(ref('Template')), example: ANSWERS.templates }, ...consolePipeline({ project: true }), ...unavailable() },
  },
  [`GET ${projectRoute}/templates/{id}`]: {
    summary: 'One template',
    description: 'One saved request body. Caller: any member.',
    tag: 'Templates',
    responses: { 200: { description: 'The template.', schema: 'Template', example: ANSWERS.template }, ...withMessages(consolePipeline({ project: true }), 404, [TEMPLATE_ERRORS.notFound]), ...unavailable() },
  },
  [`POST ${projectRoute}/templates`]: {
    summary: 'Adds a template',
    description: 'Saves a request body for one run endpoint (`flows.trigger`, `automations.trigger-async`, …) of the project’s type; a body that holds a secret is refused. Caller: a member with edit access.',
    tag: 'Templates',
    requestExample: REQUESTS.template,
    responses: {
      201: { description: 'Added.', schema: 'Template', example: ANSWERS.template },
      ...withMessages(consolePipeline({ level: 'edit', project: true, body: true }), 400, [...templateBody.messages!]),
      ...unavailable(),
    },
  },
  [`PUT ${projectRoute}/templates/{id}`]: {
    summary: 'Replaces a template',
    description: 'Replaces the template’s name, endpoint and body, with the same rules as adding one. Caller: a member with edit access.',
    tag: 'Templates',
    requestExample: REQUESTS.template,
    responses: {
      200: { description: 'Replaced.', schema: 'Template', example: ANSWERS.template },
      ...withMessages(withMessages(consolePipeline({ level: 'edit', project: true, body: true }), 400, [...templateBody.messages!]), 404, [TEMPLATE_ERRORS.notFound]),
      ...unavailable(),
    },
  },
  [`DELETE ${projectRoute}/templates/{id}`]: {
    summary: 'Deletes a template',
    description: 'Deletes the template. Caller: a member with edit access.',
    tag: 'Templates',
    responses: { 204: { description: 'Deleted.', noBody: true }, ...withMessages(consolePipeline({ level: 'edit', project: true }), 404, [TEMPLATE_ERRORS.notFound]), ...unavailable() },
  },
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

  // ---- Console: inbound hooks (DESIGN section 9).
  [`POST ${projectRoute}/webhooks`]: {
    summary: 'Creates an inbound hook (its secret is shown once)',
    description: 'Creates a URL (`url`, under PUBLIC_BASE_URL) that starts a run of the project for each delivery signed with `secret`, which is generated when not given and shown only here. Caller: a member with edit access.',
    tag: 'Inbound hooks',
    requestExample: REQUESTS.createWebhook,
    responses: { 201: { description: 'Created.', schema: 'CreatedInboundHook', example: ANSWERS.createdHook }, ...consolePipeline({ level: 'edit', project: true, body: true }), ...unavailable('webhook') },
  },
  [`GET ${projectRoute}/webhooks`]: {
    summary: 'The project’s inbound hooks (no secrets)',
    description: 'Each hook with its URL, status and rate limit; never its secret. Caller: any member.',
    tag: 'Inbound hooks',
    responses: { 200: { description: 'The hooks.', schema: listOf(ref('InboundHook')), example: ANSWERS.hooks }, ...consolePipeline({ project: true }), ...unavailable('webhook') },
  },
  [`DELETE ${projectRoute}/webhooks/{hookId}`]: {
    summary: 'Revokes an inbound hook; its URL then answers 410',
    description: 'Revokes the hook: deliveries to its URL answer 410 from then on. Caller: a member with edit access.',
    tag: 'Inbound hooks',
    responses: { 204: { description: 'Revoked.', noBody: true }, ...withMessages(consolePipeline({ level: 'edit', project: true }), 404, [API_ERRORS.webhookNotFound]), ...unavailable('webhook') },
  },

  // ---- Console: managed webhook subscriptions (DESIGN section 9).
  [`POST ${projectRoute}/webhook-subscriptions`]: {
    summary: 'Subscribes the project to a provider’s events (Stripe, Shopify, GitHub): the webhook is created at the provider',
    description:
      'Creates the webhook at the provider through its API, pointing at an inbound URL of ours, for the comma-separated `events`. Credentials: stripe `{secretKey}`; shopify `{storeDomain, accessToken, apiSecret}`; github `{token, repository, webhookSecret?}`; they are sealed at rest and never returned. ' +
      'A provider error still saves the subscription, FAILED with the provider’s message. The project needs a published definition. Caller: a member with edit access.',
    tag: 'Inbound hooks',
    requestExample: REQUESTS.createWebhookSubscription,
    responses: {
      201: { description: 'Saved: ACTIVE, or FAILED with the provider’s message (retry it).', schema: 'WebhookSubscription', example: ANSWERS.subscription },
      ...withMessages(consolePipeline({ level: 'edit', project: true, body: true }), 400, ['the credentials or events the provider needs, named']),
      409: { description: 'Nothing is published yet.', messages: [API_ERRORS.subscriptionNeedsPublish] },
      ...unavailable('webhook'),
    },
  },
  [`GET ${projectRoute}/webhook-subscriptions`]: {
    summary: 'The project’s managed subscriptions (no credentials)',
    description: 'Each subscription with its provider, events, status, endpoint, the provider’s id and any failure reason; never the credentials. Caller: any member.',
    tag: 'Inbound hooks',
    responses: { 200: { description: 'The subscriptions.', schema: listOf(ref('WebhookSubscription')), example: ANSWERS.subscriptions }, ...consolePipeline({ project: true }), ...unavailable('webhook') },
  },
  [`POST ${projectRoute}/webhook-subscriptions/{subscriptionId}/retry`]: {
    summary: 'Tries a FAILED subscription again at the provider',
    description: 'Creates the webhook at the provider again, with the stored credentials. Caller: a member with edit access.',
    tag: 'Inbound hooks',
    responses: {
      200: { description: 'The subscription after the attempt.', schema: 'WebhookSubscription', example: ANSWERS.subscription },
      ...withMessages(consolePipeline({ level: 'edit', project: true }), 404, [API_ERRORS.subscriptionNotFound]),
      409: { description: 'Not FAILED, or still being created.', messages: [API_ERRORS.subscriptionNotFailed, API_ERRORS.subscriptionInProgress] },
      ...unavailable('webhook'),
    },
  },
  [`DELETE ${projectRoute}/webhook-subscriptions/{subscriptionId}`]: {
    summary: 'Removes the webhook at the provider, then marks the subscription REVOKED; its endpoint then answers 410',
    description: 'Deletes the webhook at the provider first; only then is the subscription REVOKED, and deliveries to its endpoint answer 410. Caller: a member with edit access.',
    tag: 'Inbound hooks',
    responses: {
      204: { description: 'Revoked.', noBody: true },
      ...withMessages(consolePipeline({ level: 'edit', project: true }), 404, [API_ERRORS.subscriptionNotFound]),
      409: { description: 'Still being created.', messages: [API_ERRORS.subscriptionInProgress] },
      502: { description: 'The provider did not remove its webhook (its message follows); nothing changed here.', messages: [`${API_ERRORS.subscriptionNotRemoved} …`] },
      ...unavailable('webhook'),
    },
  },
};

function obj1(item: Schema): Schema {
  return { type: 'object', properties: { data: item }, required: ['data'] };
}
