import { ACCESS_ERRORS } from '../http-guards/console-access.js';
import { CONSOLE_ERRORS } from '../http-guards/console-auth.guard.js';
import { API_ERRORS } from '../errors/error-messages.js';
import { BODY_ERRORS } from '../json/json-object.js';
import { SERVICE_UNAVAILABLE } from '../service-client/service-client.js';
import { ref } from './answer-schemas.js';

// The vocabulary every feature describes its routes in (each feature's *-route-descriptions.ts),
// and the answers many routes share. openapi/ composes the features' tables into the document.

export type Schema = Record<string, unknown>;

/** One documented answer of a route: what it means, its body's schema (a component name or a schema), the messages it can carry. */
export interface AnswerDescription {
  description: string;
  /** A name in ANSWER_SCHEMAS, or a schema; errors default to `Error`; omitted with `noBody`. */
  schema?: string | Schema;
  messages?: readonly string[];
  noBody?: boolean;
  headers?: readonly string[];
  /** A realistic body (the feature's `*-examples.ts`); the document's build requires one for every success answer with a body. */
  example?: unknown;
  /** The body's media type when it is not `application/json` (an event stream: `text/event-stream`). */
  contentType?: string;
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
  Schedules:
    'Console: the Schedule triggers of the published automation (`workflow.schedules`): each with its next fire times and latest fire; pause, resume, run one now, or backfill a past range. Fires are runs with trigger source SCHEDULE.',
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
  /** A realistic request body (the feature's `*-examples.ts`); the document's build requires one for every operation with a body. */
  requestExample?: Record<string, unknown>;
  responses: Readonly<Record<number, AnswerDescription>>;
}

// Answers many routes share, in the order the pipeline can produce them.
export const unavailable = (...services: Array<keyof typeof SERVICE_UNAVAILABLE>): Record<number, AnswerDescription> => ({
  503: {
    description: 'A service the gateway needs (or its own database) did not answer; retry shortly.',
    messages: [...services.map((service) => SERVICE_UNAVAILABLE[service]), API_ERRORS.serviceTemporarilyUnavailable],
  },
});

export const versionError = {
  description:
    'A request to another API version (`/v2/orgs/…`) gets `VersionError` (`code` UNSUPPORTED_API_VERSION, `supportedVersions`); on this path, the messages below.',
};

export const bodyErrors: Record<number, AnswerDescription> = {
  413: { description: 'The body is larger than the gateway accepts.', messages: ['Request body too large'] },
  415: { description: 'The body is not sent as JSON.', messages: [BODY_ERRORS.notJsonType] },
};

export const bodyMessages = [BODY_ERRORS.notJson, BODY_ERRORS.notObject, BODY_ERRORS.tooDeep, 'a field that fails its rule, named (`name must be a string`)'];

/** The token pipeline (DESIGN section 5): token, project, switch, type, scope. */
export function tokenPipeline(options: { typeMessages?: string[]; body?: boolean; rateLimited?: boolean } = {}): Record<number, AnswerDescription> {
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
export function consolePipeline(options: { level?: 'member' | 'edit' | 'owner' | 'platform-admin'; org?: boolean; project?: boolean; body?: boolean } = {}): Record<number, AnswerDescription> {
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

export const TYPE_MESSAGES = {
  bots: [API_ERRORS.botChatbotOnly, API_ERRORS.typeNotSupported],
  flows: [API_ERRORS.automationsUseAutomationApi, API_ERRORS.typeNotSupported],
  automations: [API_ERRORS.automationOnly, API_ERRORS.typeNotSupported],
};

export const SCOPE_OF = { bots: 'bot:invoke', flows: 'flow:trigger', automations: 'automation:trigger' } as const;

export const projectRoute = '/v1/orgs/{orgId}/projects/{projectId}';
export const dashboardOnly = { 403: { description: 'A real API token gets no data here.', messages: [API_ERRORS.unauthorized] } };

export const withMessages = (pipeline: Record<number, AnswerDescription>, status: number, messages: string[]): Record<number, AnswerDescription> => ({
  ...pipeline,
  [status]: { ...pipeline[status]!, messages: [...(pipeline[status]?.messages ?? []), ...messages] },
});

/**
 * THE route description table, keyed by `METHOD /path` as the code declares the route
 * (gateway-routes.ts). A route without an entry here fails the document's build, and the
 * route-coverage test (e2e/openapi.e2e-spec.ts) compares the document with the routes the
 * running gateway registered.
 */

export function obj1(item: Schema): Schema {
  return { type: 'object', properties: { data: item }, required: ['data'] };
}
