import { consolePipeline, projectRoute, type RouteDescription, unavailable, withMessages } from '../platform/api-docs/route-description.js';
import { listOf, ref } from '../platform/api-docs/answer-schemas.js';
import { ANSWERS, REQUESTS } from './schedules-examples.js';
import { MAX_BACKFILL_FIRES, SCHEDULE_MESSAGES } from './schedule-messages.js';

const route = `${projectRoute}/schedules`;
const notFound = (pipeline: ReturnType<typeof consolePipeline>) => withMessages(pipeline, 404, [SCHEDULE_MESSAGES.notFound]);
const changed = (verb: string, example: unknown) => ({
  200: { description: `${verb}; the schedule as the list shows it.`, schema: 'Schedule', example },
  ...notFound(consolePipeline({ level: 'edit', project: true })),
  ...unavailable('scheduler'),
});

/** The schedules routes' descriptions, keyed by `METHOD /path` as the code declares each route. */
export const SCHEDULES_ROUTE_DESCRIPTIONS: Readonly<Record<string, RouteDescription>> = {
  [`GET ${route}`]: {
    summary: 'The Schedule triggers of the published automation',
    description:
      'Each schedule of the published definition, in definition order, with its state (`paused`, `skippedCount`), its next five fire times (ISO 8601 UTC, nominal times before jitter; for a paused schedule the times it would fire at if resumed) and its latest fire (`{scheduledTime, invocationId, status}` or null). A field the schedule does not set is null. Caller: any member.',
    tag: 'Schedules',
    responses: { 200: { description: 'The schedules.', schema: listOf(ref('Schedule')), example: ANSWERS.schedules }, ...consolePipeline({ project: true }), ...unavailable('scheduler') },
  },
  [`POST ${route}/{id}/pause`]: {
    summary: 'Pauses a schedule',
    description: 'Fires due while paused are dropped. A pause is state, not definition: it survives publishes. Caller: a member with edit access.',
    tag: 'Schedules',
    responses: changed('Paused', ANSWERS.schedulePaused),
  },
  [`POST ${route}/{id}/resume`]: {
    summary: 'Resumes a paused schedule',
    description: 'The schedule fires on from its next fire time after now; nothing due while it was paused is caught up. Caller: a member with edit access.',
    tag: 'Schedules',
    responses: changed('Resumed', ANSWERS.schedules.data[0]),
  },
  [`POST ${route}/{id}/trigger`]: {
    summary: 'Runs the schedule once now',
    description:
      'One fire with nominal time now: a run like any other fire of the schedule (trigger source SCHEDULE, `schedulerJobName` `schedule:<id>`, `scheduledFor` now), whatever the overlap policy. Caller: a member with edit access.',
    tag: 'Schedules',
    responses: {
      202: { description: 'The run is recorded.', schema: 'ScheduleRunStarted', example: ANSWERS.scheduleRunStarted },
      ...notFound(consolePipeline({ level: 'edit', project: true })),
      422: { description: 'The invocation service recorded no run (its reason, for example a used-up monthly quota).' },
      ...unavailable('scheduler', 'invocation'),
    },
  },
  [`POST ${route}/{id}/backfill`]: {
    summary: `Runs the schedule once per fire time in [from, to) (at most ${MAX_BACKFILL_FIRES})`,
    description:
      `One run per fire time of the schedule in [from, to), oldest first, overlap ignored; \`count\` is the number of fire times. A fire time that has run already keeps its run. More than ${MAX_BACKFILL_FIRES} fire times: 400, nothing runs. Caller: a member with edit access.`,
    tag: 'Schedules',
    requestBody: {
      type: 'object',
      properties: { from: { type: 'string', format: 'date-time' }, to: { type: 'string', format: 'date-time' } },
      required: ['from', 'to'],
      additionalProperties: false,
    },
    requestExample: REQUESTS.scheduleBackfill,
    responses: {
      202: { description: 'The fires are recorded and start at once.', schema: 'ScheduleBackfill', example: ANSWERS.scheduleBackfill },
      ...withMessages(notFound(consolePipeline({ level: 'edit', project: true, body: true })), 400, [
        SCHEDULE_MESSAGES.fromToRequired,
        SCHEDULE_MESSAGES.dateInvalid('from'),
        SCHEDULE_MESSAGES.dateInvalid('to'),
        SCHEDULE_MESSAGES.fromNotBeforeTo,
        SCHEDULE_MESSAGES.unknownField('<field>'),
        SCHEDULE_MESSAGES.tooMany(MAX_BACKFILL_FIRES),
      ]),
      ...unavailable('scheduler'),
    },
  },
};
