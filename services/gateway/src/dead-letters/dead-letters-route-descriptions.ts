import { consolePipeline, projectRoute, type QueryParameter, type RouteDescription, SCOPE_OF, tokenPipeline, TYPE_MESSAGES, unavailable, withMessages } from '../platform/api-docs/route-description.js';
import { uuid } from '../platform/api-docs/answer-schemas.js';
import { ANSWERS, REQUESTS } from './dead-letters-examples.js';
import { BULK_REPLAY_MESSAGES } from './bulk-replay-dead-letter-events.handler.js';
import { DEAD_LETTER_REPLAY_MESSAGES } from './replay-dead-letter-event.handler.js';
import { DEAD_LETTER_LIST_MESSAGES } from './list-dead-letter-events.handler.js';

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

/** The dead-letters routes' descriptions, keyed by `METHOD /path` as the code declares each route. */
export const DEAD_LETTERS_ROUTE_DESCRIPTIONS: Readonly<Record<string, RouteDescription>> = {
  ...tokenDeadLetters('flows'),
  ...tokenDeadLetters('automations'),

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
};
