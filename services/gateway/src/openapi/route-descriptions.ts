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
import { RUN_LOG_QUERY_MESSAGES } from '../queries/run-log-query.js';
import { SERVICE_UNAVAILABLE } from '../service-client/service-client.js';
import { TEMPLATE_ERRORS } from '../templates/template-rules.js';
import { listOf, ref } from './answer-schemas.js';

type Schema = Record<string, unknown>;

/** One documented answer of a route: what it means, its body's schema (a component name or a schema), the messages it can carry. */
export interface AnswerDescription {
  description: string;
  /** A name in ANSWER_SCHEMAS, or a schema; errors default to `Error`; omitted with `noBody`. */
  schema?: string | Schema;
  messages?: readonly string[];
  noBody?: boolean;
  headers?: readonly string[];
}

export interface QueryParameter {
  name: string;
  /** `query` unless said. */
  in?: 'query' | 'header';
  schema: Schema;
  description?: string;
  required?: boolean;
}

/** What the code cannot say about a route: its purpose, its query, and every answer it documents. */
export interface RouteDescription {
  summary: string;
  tag: 'Runs' | 'Invocations' | 'Polling' | 'Dead letters' | 'Organizations' | 'Projects' | 'API tokens' | 'Run logs' | 'Templates' | 'Inbound hooks';
  query?: readonly QueryParameter[];
  /** Only for a body the handler checks itself (no DTO class). */
  requestBody?: Schema;
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

/** The six run endpoints: the same pipeline, answers that differ by sync or async. */
function runRoute(summary: string, kind: keyof typeof TYPE_MESSAGES, mode: 'sync' | 'async'): RouteDescription {
  const pipeline = tokenPipeline({ typeMessages: TYPE_MESSAGES[kind], body: true, rateLimited: true });
  return {
    summary,
    tag: 'Runs',
    query: idempotencyHeader,
    responses: {
      ...(mode === 'sync'
        ? { 200: { description: 'The run finished (or a dry run was checked); `result` holds its output.', schema: 'RunAnswer' } }
        : {
            200: { description: 'A dry run (`dryRun: true`): checked, not run; `result.validation` says what the trigger expects.', schema: 'RunAnswer' },
            202: { description: 'The run is accepted (QUEUED), or SCHEDULED with `scheduledFor`.', schema: 'RunAnswer' },
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
  { name: 'limit', schema: { type: 'integer', minimum: 1, maximum: 200, default: 50 } },
  { name: 'offset', schema: { type: 'integer', minimum: 0, default: 0 } },
];
const deadLetterListErrors = [DEAD_LETTER_LIST_MESSAGES.limitInvalid, DEAD_LETTER_LIST_MESSAGES.offsetInvalid, DEAD_LETTER_LIST_MESSAGES.unresolvedOnlyInvalid];

function tokenDeadLetters(kind: 'flows' | 'automations'): Record<string, RouteDescription> {
  const path = `/v1/orgs/{orgId}/${kind}/{projectId}/dead-letters`;
  const list = tokenPipeline({ typeMessages: TYPE_MESSAGES[kind] });
  const replay = tokenPipeline({ typeMessages: TYPE_MESSAGES[kind] });
  return {
    [`GET ${path}`]: {
      summary: `Dead-letter events of the ${kind === 'flows' ? 'chatbot project' : 'automation project'}, newest first`,
      tag: 'Dead letters',
      query: deadLetterQuery,
      responses: { 200: { description: 'A page of events.', schema: 'DeadLetterPage' }, ...list, 400: { ...list[400]!, messages: [...list[400]!.messages!, ...deadLetterListErrors] }, ...unavailable('deadLetter') },
    },
    [`POST ${path}`]: {
      summary: 'Replays one dead-letter event (`?id=`)',
      tag: 'Dead letters',
      query: [{ name: 'id', schema: { type: 'string' }, description: 'The event to replay.' }],
      responses: {
        200: { description: 'Replayed.', schema: 'Success' },
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
  { name: 'projectId', schema: { type: 'string' } },
  { name: 'status', schema: { type: 'string' } },
  { name: 'targetType', schema: { type: 'string' } },
  { name: 'mode', schema: { type: 'string' } },
  { name: 'triggerSource', schema: { type: 'string' } },
  { name: 'from', schema: { type: 'string', format: 'date-time' } },
  { name: 'to', schema: { type: 'string', format: 'date-time' } },
  { name: 'q', schema: { type: 'string' }, description: 'An invocationId or an idempotency key.' },
  { name: 'limit', schema: { type: 'integer', minimum: 1, maximum: 200, default: 50 } },
  { name: 'cursor', schema: { type: 'string' } },
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
  'POST /v1/orgs/{orgId}/bots/{projectId}/message': runRoute('Sends a message to the chatbot and waits for its answer', 'bots', 'sync'),
  'POST /v1/orgs/{orgId}/bots/{projectId}/invoke': runRoute('Sends a message to the chatbot without waiting (callback optional)', 'bots', 'async'),
  'POST /v1/orgs/{orgId}/flows/{projectId}/trigger': runRoute('Runs the chatbot project’s flow and waits for it', 'flows', 'sync'),
  'POST /v1/orgs/{orgId}/flows/{projectId}/trigger-async': runRoute('Starts or schedules a run of the chatbot project’s flow', 'flows', 'async'),
  'POST /v1/orgs/{orgId}/automations/{projectId}/trigger': runRoute('Runs the automation and waits for it', 'automations', 'sync'),
  'POST /v1/orgs/{orgId}/automations/{projectId}/trigger-async': runRoute('Starts or schedules a run of the automation', 'automations', 'async'),

  'GET /v1/orgs/{orgId}/external-invocations/{invocationId}': {
    summary: 'Reads one run: the token that started it, or any member of the organization (console JWT)',
    tag: 'Invocations',
    responses: {
      200: { description: 'The full invocation (secrets redacted).', schema: 'Invocation' },
      ...tokenPipeline(),
      401: { description: 'No token, or a bad one; or a console JWT that does not verify.', messages: [API_ERRORS.missingToken, API_ERRORS.invalidToken, CONSOLE_ERRORS.invalid] },
      403: { description: 'Another token started the run, or the token lacks the run’s scope.', messages: [API_ERRORS.tokenMismatch, API_ERRORS.insufficientScope, API_ERRORS.externalApiDisabled] },
      404: { description: 'No such run (or organization, for a console member).', messages: [API_ERRORS.invocationNotFound, ACCESS_ERRORS.organizationNotFound, API_ERRORS.projectNotFound] },
      ...unavailable('invocation'),
    },
  },
  'PATCH /v1/orgs/{orgId}/external-invocations/{invocationId}': {
    summary: 'Cancels or reschedules a scheduled run (token or console member with edit access); approves or rejects a paused one (console only)',
    tag: 'Invocations',
    responses: {
      200: { description: 'The full invocation after the change.', schema: 'Invocation' },
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
    tag: 'Polling',
    responses: { 201: { description: 'The trigger as saved.', schema: obj1(ref('PollingTrigger')) }, ...tokenPipeline({ typeMessages: TYPE_MESSAGES.flows, body: true }), ...unavailable('polling') },
  },
  'GET /v1/orgs/{orgId}/flows/{projectId}/polling': {
    summary: 'Lists the project’s polling triggers (or the one `pollKey` names)',
    tag: 'Polling',
    query: [{ name: 'pollKey', schema: { type: 'string' } }],
    responses: { 200: { description: 'The triggers.', schema: listOf(ref('PollingTrigger')) }, ...tokenPipeline({ typeMessages: TYPE_MESSAGES.flows }), ...unavailable('polling') },
  },
  'DELETE /v1/orgs/{orgId}/flows/{projectId}/polling': {
    summary: 'Removes the polling trigger `pollKey` names',
    tag: 'Polling',
    query: [{ name: 'pollKey', schema: { type: 'string' }, required: true }],
    responses: {
      200: { description: 'Removed.', schema: 'Success' },
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
    tag: 'Inbound hooks',
    responses: {
      202: { description: 'Accepted: the run started.', schema: 'HookAccepted' },
      400: { description: 'The body is not JSON.', messages: [BODY_ERRORS.notJson, BODY_ERRORS.notObject] },
      401: { description: 'Missing or wrong signature, or a stale timestamp.', messages: [API_ERRORS.webhookInvalidSignature, API_ERRORS.webhookStaleTimestamp] },
      403: { description: 'The project switched its external API off.', messages: [API_ERRORS.externalApiDisabled] },
      404: { description: 'No such hook.', messages: [API_ERRORS.webhookNotFound] },
      405: { description: 'Any method but POST (`Allow: POST`).', messages: [API_ERRORS.webhookMethodNotAllowed], headers: ['allow'] },
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
    tag: 'Organizations',
    responses: { 201: { description: 'Created.', schema: 'Organization' }, ...consolePipeline({ org: false, body: true }), ...unavailable() },
  },
  'GET /v1/orgs': {
    summary: 'The caller’s organizations, with the caller’s role',
    tag: 'Organizations',
    responses: { 200: { description: 'The organizations.', schema: listOf(ref('OrganizationRow')) }, ...consolePipeline({ org: false }), ...unavailable() },
  },
  'PUT /v1/orgs/{orgId}/plan': {
    summary: 'Sets the organization’s plan (platform-admin)',
    tag: 'Organizations',
    responses: { 200: { description: 'The plan as set.', schema: 'Plan' }, ...consolePipeline({ level: 'platform-admin', body: true }), ...unavailable() },
  },
  'GET /v1/orgs/{orgId}/plan': {
    summary: 'The plan and this period’s usage (any member)',
    tag: 'Organizations',
    responses: { 200: { description: 'Plan and usage.', schema: 'PlanUsage' }, ...consolePipeline(), ...unavailable('invocation') },
  },
  'POST /v1/orgs/{orgId}/members': {
    summary: 'Adds a member (OWNER)',
    tag: 'Organizations',
    responses: {
      201: { description: 'Added.', schema: 'Member' },
      ...consolePipeline({ level: 'owner', body: true }),
      409: { description: 'The user already is a member.', messages: ['User is already a member of this organization'] },
      ...unavailable(),
    },
  },

  // ---- Console: projects.
  'POST /v1/orgs/{orgId}/projects': {
    summary: 'Creates a project',
    tag: 'Projects',
    responses: { 201: { description: 'Created.', schema: 'ProjectCreated' }, ...consolePipeline({ level: 'edit', body: true }), ...unavailable() },
  },
  'GET /v1/orgs/{orgId}/projects': {
    summary: 'The organization’s projects',
    tag: 'Projects',
    responses: { 200: { description: 'The projects.', schema: listOf(ref('ProjectSummary')) }, ...consolePipeline(), ...unavailable() },
  },
  [`GET ${projectRoute}`]: {
    summary: 'One project',
    tag: 'Projects',
    responses: { 200: { description: 'The project.', schema: 'Project' }, ...consolePipeline({ project: true }), ...unavailable() },
  },
  [`DELETE ${projectRoute}`]: {
    summary: 'Deletes the project (OWNER); its tokens and polls stop',
    tag: 'Projects',
    responses: { 204: { description: 'Deleted.', noBody: true }, ...consolePipeline({ level: 'owner', project: true }), ...unavailable() },
  },
  [`GET ${projectRoute}/definition`]: {
    summary: 'The draft or the published definition',
    tag: 'Projects',
    query: [{ name: 'stage', schema: { type: 'string', enum: ['draft', 'published'] }, required: true }],
    responses: { 200: { description: 'That stage (`version` and `definition` null when it has nothing yet).', schema: 'DefinitionStage' }, ...withMessages(consolePipeline({ project: true }), 400, [PROJECT_READ_ERRORS.badStage]), ...unavailable() },
  },
  [`PUT ${projectRoute}/definition`]: {
    summary: 'Saves the draft definition',
    tag: 'Projects',
    responses: {
      200: { description: 'Saved; `draftVersion` grew by one.', schema: 'DraftSaved' },
      ...consolePipeline({ level: 'edit', project: true, body: true }),
      400: { ...versionError, schema: { anyOf: [ref('DefinitionError'), ref('VersionError')] }, messages: [...bodyMessages, 'the definition’s problems, summarized (`details` lists them)'] },
      ...unavailable(),
    },
  },
  [`POST ${projectRoute}/publish`]: {
    summary: 'Publishes the draft',
    tag: 'Projects',
    responses: {
      200: { description: 'Published.', schema: 'Published' },
      ...consolePipeline({ level: 'edit', project: true }),
      409: { description: 'There is no draft to publish.', messages: ['There is no draft definition to publish'] },
      ...unavailable(),
    },
  },
  [`GET ${projectRoute}/api-settings`]: {
    summary: 'The project’s API settings',
    tag: 'Projects',
    responses: { 200: { description: 'The settings (the callback secret only as `defaultCallbackSecretSet`).', schema: 'ApiSettings' }, ...consolePipeline({ project: true }), ...unavailable() },
  },
  [`PATCH ${projectRoute}/api-settings`]: {
    summary: 'Changes the project’s API settings',
    tag: 'Projects',
    responses: { 200: { description: 'The settings after the change.', schema: 'ApiSettings' }, ...consolePipeline({ level: 'edit', project: true, body: true }), ...unavailable() },
  },
  [`POST ${projectRoute}/api-tokens`]: {
    summary: 'Issues an API token (shown once)',
    tag: 'API tokens',
    responses: { 201: { description: 'Issued.', schema: 'IssuedApiToken' }, ...consolePipeline({ level: 'edit', project: true, body: true }), ...unavailable() },
  },
  [`GET ${projectRoute}/api-tokens`]: {
    summary: 'The project’s live tokens, with their last use',
    tag: 'API tokens',
    responses: { 200: { description: 'The tokens (never the secrets).', schema: listOf(ref('ApiToken')) }, ...consolePipeline({ project: true }), ...unavailable() },
  },
  [`DELETE ${projectRoute}/api-tokens/{tokenId}`]: {
    summary: 'Revokes a token; it is refused on its next call',
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
    tag: 'Run logs',
    query: logsQuery,
    responses: { 200: { description: 'A page of runs (`nextCursor` null on the last).', schema: 'RunLogPage' }, ...withMessages(consolePipeline(), 400, logQueryMessages), ...dashboardOnly, ...unavailable('invocation') },
  },
  'GET /v1/orgs/{orgId}/external-invocations/metrics': {
    summary: 'Invocation health: counts, durations, callbacks, a series and recent runs',
    tag: 'Run logs',
    query: [
      { name: 'projectId', schema: { type: 'string' } },
      { name: 'from', schema: { type: 'string', format: 'date-time' } },
      { name: 'to', schema: { type: 'string', format: 'date-time' } },
      { name: 'bucket', schema: { type: 'string', enum: ['hour', 'day'] } },
    ],
    responses: { 200: { description: 'The metrics (default: the last 24 h).', schema: 'InvocationMetrics' }, ...withMessages(consolePipeline(), 400, logQueryMessages), ...dashboardOnly, ...unavailable('invocation') },
  },
  [`POST ${projectRoute}/polling-triggers`]: {
    summary: 'Registers (or updates) a polling trigger',
    tag: 'Polling',
    responses: { 201: { description: 'The trigger as saved.', schema: obj1(ref('PollingTrigger')) }, ...consolePipeline({ level: 'edit', project: true, body: true }), ...unavailable('polling') },
  },
  [`GET ${projectRoute}/polling-triggers`]: {
    summary: 'The project’s polling triggers',
    tag: 'Polling',
    query: [{ name: 'pollKey', schema: { type: 'string' } }],
    responses: { 200: { description: 'The triggers.', schema: listOf(ref('PollingTrigger')) }, ...consolePipeline({ project: true }), ...unavailable('polling') },
  },
  [`GET ${projectRoute}/polling-triggers/{pollKey}`]: {
    summary: 'One polling trigger',
    tag: 'Polling',
    responses: { 200: { description: 'The trigger (a list of at most one).', schema: listOf(ref('PollingTrigger')) }, ...consolePipeline({ project: true }), ...unavailable('polling') },
  },
  [`DELETE ${projectRoute}/polling-triggers/{pollKey}`]: {
    summary: 'Removes a polling trigger',
    tag: 'Polling',
    responses: { 200: { description: 'Removed.', schema: 'Success' }, ...consolePipeline({ level: 'edit', project: true }), 404: { description: 'No such organization, project or trigger.', messages: [ACCESS_ERRORS.organizationNotFound, ACCESS_ERRORS.projectNotFound, POLLING_NOT_FOUND] }, ...unavailable('polling') },
  },
  [`GET ${projectRoute}/dead-letters`]: {
    summary: 'The project’s dead-letter events',
    tag: 'Dead letters',
    query: deadLetterQuery,
    responses: { 200: { description: 'A page of events.', schema: 'DeadLetterPage' }, ...withMessages(consolePipeline({ project: true }), 400, deadLetterListErrors), ...unavailable('deadLetter') },
  },
  [`POST ${projectRoute}/dead-letters/replay`]: {
    summary: 'Replays every unreplayed event matching the filter, each at most once (`dryRun` counts only)',
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
    responses: {
      200: { description: '`{matched}` for a dry run, else the counts.', schema: 'BulkReplay' },
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
    tag: 'Dead letters',
    responses: {
      200: { description: 'Replayed.', schema: 'Success' },
      ...consolePipeline({ level: 'edit', project: true }),
      422: { description: 'Not found, already replayed, or the replay failed (with its reason).', messages: [DEAD_LETTER_REPLAY_MESSAGES.notFound, DEAD_LETTER_REPLAY_MESSAGES.alreadyReplayed] },
      ...unavailable('deadLetter', 'invocation'),
    },
  },

  // ---- Console: the template library and the request example builder.
  [`GET ${projectRoute}/templates`]: {
    summary: 'The project’s request templates',
    tag: 'Templates',
    responses: { 200: { description: 'The templates.', schema: listOf(ref('Template')) }, ...consolePipeline({ project: true }), ...unavailable() },
  },
  [`GET ${projectRoute}/templates/{id}`]: {
    summary: 'One template',
    tag: 'Templates',
    responses: { 200: { description: 'The template.', schema: 'Template' }, ...withMessages(consolePipeline({ project: true }), 404, [TEMPLATE_ERRORS.notFound]), ...unavailable() },
  },
  [`POST ${projectRoute}/templates`]: {
    summary: 'Adds a template',
    tag: 'Templates',
    responses: { 201: { description: 'Added.', schema: 'Template' }, ...withMessages(consolePipeline({ level: 'edit', project: true, body: true }), 400, [...templateBody.messages!]), ...unavailable() },
  },
  [`PUT ${projectRoute}/templates/{id}`]: {
    summary: 'Replaces a template',
    tag: 'Templates',
    responses: {
      200: { description: 'Replaced.', schema: 'Template' },
      ...withMessages(withMessages(consolePipeline({ level: 'edit', project: true, body: true }), 400, [...templateBody.messages!]), 404, [TEMPLATE_ERRORS.notFound]),
      ...unavailable(),
    },
  },
  [`DELETE ${projectRoute}/templates/{id}`]: {
    summary: 'Deletes a template',
    tag: 'Templates',
    responses: { 204: { description: 'Deleted.', noBody: true }, ...withMessages(consolePipeline({ level: 'edit', project: true }), 404, [TEMPLATE_ERRORS.notFound]), ...unavailable() },
  },
  [`GET ${projectRoute}/request-example`]: {
    summary: 'A ready request for one run endpoint (a template’s body, or the keys the trigger expects), with curl, JavaScript and Python',
    tag: 'Templates',
    query: [
      { name: 'endpoint', schema: { type: 'string' } },
      { name: 'templateId', schema: { type: 'string' } },
    ],
    responses: {
      200: { description: 'The example; the token is the `$RUNLINE_TOKEN` placeholder.', schema: 'RequestExample' },
      ...withMessages(withMessages(consolePipeline({ project: true }), 400, [REQUEST_EXAMPLE_ERRORS.endpointRequired]), 404, [TEMPLATE_ERRORS.notFound]),
      ...unavailable(),
    },
  },

  // ---- Console: inbound hooks (DESIGN section 9).
  [`POST ${projectRoute}/webhooks`]: {
    summary: 'Creates an inbound hook (its secret is shown once)',
    tag: 'Inbound hooks',
    responses: { 201: { description: 'Created.', schema: 'CreatedInboundHook' }, ...consolePipeline({ level: 'edit', project: true, body: true }), ...unavailable('webhook') },
  },
  [`GET ${projectRoute}/webhooks`]: {
    summary: 'The project’s inbound hooks (no secrets)',
    tag: 'Inbound hooks',
    responses: { 200: { description: 'The hooks.', schema: listOf(ref('InboundHook')) }, ...consolePipeline({ project: true }), ...unavailable('webhook') },
  },
  [`DELETE ${projectRoute}/webhooks/{hookId}`]: {
    summary: 'Revokes an inbound hook; its URL then answers 410',
    tag: 'Inbound hooks',
    responses: { 204: { description: 'Revoked.', noBody: true }, ...withMessages(consolePipeline({ level: 'edit', project: true }), 404, [API_ERRORS.webhookNotFound]), ...unavailable('webhook') },
  },

  // ---- Console: managed webhook subscriptions (DESIGN section 9).
  [`POST ${projectRoute}/webhook-subscriptions`]: {
    summary: 'Subscribes the project to a provider’s events (Stripe, Shopify, GitHub): the webhook is created at the provider',
    tag: 'Inbound hooks',
    responses: {
      201: { description: 'Saved: ACTIVE, or FAILED with the provider’s message (retry it).', schema: 'WebhookSubscription' },
      ...withMessages(consolePipeline({ level: 'edit', project: true, body: true }), 400, ['the credentials or events the provider needs, named']),
      409: { description: 'Nothing is published yet.', messages: [API_ERRORS.subscriptionNeedsPublish] },
      ...unavailable('webhook'),
    },
  },
  [`GET ${projectRoute}/webhook-subscriptions`]: {
    summary: 'The project’s managed subscriptions (no credentials)',
    tag: 'Inbound hooks',
    responses: { 200: { description: 'The subscriptions.', schema: listOf(ref('WebhookSubscription')) }, ...consolePipeline({ project: true }), ...unavailable('webhook') },
  },
  [`POST ${projectRoute}/webhook-subscriptions/{subscriptionId}/retry`]: {
    summary: 'Tries a FAILED subscription again at the provider',
    tag: 'Inbound hooks',
    responses: {
      200: { description: 'The subscription after the attempt.', schema: 'WebhookSubscription' },
      ...withMessages(consolePipeline({ level: 'edit', project: true }), 404, [API_ERRORS.subscriptionNotFound]),
      409: { description: 'Not FAILED, or still being created.', messages: [API_ERRORS.subscriptionNotFailed, API_ERRORS.subscriptionInProgress] },
      ...unavailable('webhook'),
    },
  },
  [`DELETE ${projectRoute}/webhook-subscriptions/{subscriptionId}`]: {
    summary: 'Removes the webhook at the provider, then marks the subscription REVOKED; its endpoint then answers 410',
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
