import { consolePipeline, obj1, projectRoute, type RouteDescription, tokenPipeline, TYPE_MESSAGES, unavailable, withMessages } from '../platform/api-docs/route-description.js';
import { listOf, ref } from '../platform/api-docs/answer-schemas.js';
import { ANSWERS, REQUESTS } from './polling-examples.js';
import { API_ERRORS } from '../platform/errors/error-messages.js';
import { ACCESS_ERRORS } from '../platform/http-guards/console-access.js';
import { POLLING_NOT_FOUND } from './remove-polling-trigger.handler.js';

/** The polling routes' descriptions, keyed by `METHOD /path` as the code declares each route. */
export const POLLING_ROUTE_DESCRIPTIONS: Readonly<Record<string, RouteDescription>> = {
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
};
