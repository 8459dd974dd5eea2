/**
 * Runs started by a fire of an automation's Schedule trigger (DESIGN.md section 12): what the
 * scheduler's request says about the fire, and what the run's document shows of it. Pure.
 */
import type { BusMessage } from '@runline/bus';
import {
  create,
  EVENT_TYPES,
  FireRunEndedSchema,
  newEnvelope,
  timestampDate,
  timestampFromDate,
  toBusMessage,
  type StartInvocationRequest,
} from '@runline/contracts';
import type { JsonValue } from '@runline/engine';
import type { InvocationEvent, InvocationEventType, RequestInfo } from './invocation-event.js';

/** The fire a run belongs to: the schedule's id and the nominal fire time (ISO 8601, before jitter). */
export interface ScheduleFireInfo {
  id: string;
  scheduledTime: string;
}

/** `schedulerJobName` of a fire's run: `schedule:<id>` (DESIGN.md section 12). */
export const SCHEDULE_JOB_NAME_PREFIX = 'schedule:';

/** The fire a StartInvocation request comes from, or null for every other request. */
export function scheduleFireOf(request: Pick<StartInvocationRequest, 'scheduleFire'>): ScheduleFireInfo | null {
  const fire = request.scheduleFire;
  if (!fire || fire.scheduleId === '' || !fire.scheduledTime) return null;
  return { id: fire.scheduleId, scheduledTime: timestampDate(fire.scheduledTime).toISOString() };
}

/** The fields of a run's document a fire sets (the projector's document has them all). */
interface FireFields {
  scheduledFor: string | null;
  schedulerJobName: string | null;
}

/** What a fire's run shows from its first event: `scheduledFor` the nominal time, its job name. */
export function scheduleFireFields(request: RequestInfo): FireFields {
  const fire = request.schedule;
  return fire ? { scheduledFor: fire.scheduledTime, schedulerJobName: `${SCHEDULE_JOB_NAME_PREFIX}${fire.id}` } : { scheduledFor: null, schedulerJobName: null };
}

/**
 * The document with `trace.schedule` `{id, scheduledTime}` when the run is a fire's: the
 * engine's trace knows nothing of schedules, so the fold adds it to whatever trace the run has.
 */
export function withScheduleTrace<Document extends FireFields & { triggerSource: string; trace: JsonValue }>(document: Document): Document {
  const jobName = document.schedulerJobName;
  if (document.triggerSource !== 'SCHEDULE' || jobName === null || !jobName.startsWith(SCHEDULE_JOB_NAME_PREFIX) || document.scheduledFor === null) return document;
  const trace = document.trace;
  const base: { [key: string]: JsonValue } = trace !== null && typeof trace === 'object' && !Array.isArray(trace) ? trace : {};
  if (base.schedule !== undefined) return document;
  return { ...document, trace: { ...base, schedule: { id: jobName.slice(SCHEDULE_JOB_NAME_PREFIX.length), scheduledTime: document.scheduledFor } } };
}

/** The events that end a run, as the scheduler counts a fire's run ended. */
const RUN_ENDING_EVENTS: ReadonlySet<InvocationEventType> = new Set(['InvocationSucceeded', 'InvocationFailed', 'InvocationTimedOut', 'InvocationCancelled']);
const FINAL_STATUSES: ReadonlySet<string> = new Set(['SUCCEEDED', 'FAILED', 'TIMEOUT', 'CANCELLED']);

/** What a fire's run shows at its end. */
type EndedFireRun = FireFields & { invocationId: string; status: string; triggerSource: string; completedAt: string | null };

/**
 * The scheduler's FireRunEnded when the events `stored` end a fire's run, else null: the
 * scheduler hears of its own runs' ends only, not of every run's (a transaction per run cut
 * the multi-process mode's throughput by 40%).
 */
export function fireRunEndedMessage(
  document: EndedFireRun | null,
  stored: readonly InvocationEvent[],
  owner: { orgId: string; projectId: string },
): BusMessage | null {
  if (document === null || document.triggerSource !== 'SCHEDULE' || !FINAL_STATUSES.has(document.status)) return null;
  const jobName = document.schedulerJobName;
  if (jobName === null || !jobName.startsWith(SCHEDULE_JOB_NAME_PREFIX) || document.scheduledFor === null) return null;
  const ending = stored.find((event) => RUN_ENDING_EVENTS.has(event.data.type));
  if (!ending) return null;
  return toBusMessage(
    newEnvelope({
      type: EVENT_TYPES.FIRE_RUN_ENDED,
      payload: create(FireRunEndedSchema, {
        invocationId: document.invocationId,
        scheduleId: jobName.slice(SCHEDULE_JOB_NAME_PREFIX.length),
        scheduledTime: timestampFromDate(new Date(document.scheduledFor)),
        status: document.status,
        endedAt: timestampFromDate(new Date(document.completedAt ?? ending.occurredAt)),
      }),
      orgId: owner.orgId,
      projectId: owner.projectId,
      invocationId: document.invocationId,
    }),
  );
}
