import type { BusMessage } from '@runline/bus';
import {
  create,
  EVENT_TYPES,
  isUuid,
  JobKind,
  newEnvelope,
  ScheduledJobCancelledSchema,
  ScheduledJobFiredSchema,
  ScheduledJobRescheduledSchema,
  timestampFromDate,
  toBusMessage,
} from '@runline/contracts';
import type { JobKindName } from '../entities/scheduled-job.entity.js';
import type { ClaimedJob, JobRow } from './scheduled-jobs.repository.js';

const KINDS: Record<JobKindName, JobKind> = {
  START_RUN: JobKind.START_RUN,
  RESUME_RUN: JobKind.RESUME_RUN,
  RETRY_RUN: JobKind.RETRY_RUN,
};

/** The stored name of a wire kind, or null for UNSPECIFIED and kinds this version does not know. */
export function kindName(kind: JobKind): JobKindName | null {
  switch (kind) {
    case JobKind.START_RUN:
      return 'START_RUN';
    case JobKind.RESUME_RUN:
      return 'RESUME_RUN';
    case JobKind.RETRY_RUN:
      return 'RETRY_RUN';
    default:
      return null;
  }
}

/** The longest job name accepted; names are chosen by the sender and are the primary key. */
export const MAX_JOB_NAME_LENGTH = 1000;

/** What is wrong with the fields every job message carries, or null if they are fine. */
export function jobProblem(job: { name: string; invocationId: string; orgId: string; projectId: string }): string | null {
  if (job.name === '') return 'a job needs a name';
  if (job.name.length > MAX_JOB_NAME_LENGTH) return `a job name may have at most ${MAX_JOB_NAME_LENGTH} characters`;
  for (const field of ['invocationId', 'orgId', 'projectId'] as const) {
    if (!isUuid(job[field])) return `${field} must be a UUID`;
  }
  return null;
}

export function jobFiredMessage(job: ClaimedJob, firedAt: Date): BusMessage {
  return toBusMessage(
    newEnvelope({
      type: EVENT_TYPES.SCHEDULED_JOB_FIRED,
      payload: create(ScheduledJobFiredSchema, {
        name: job.name,
        kind: KINDS[job.kind],
        invocationId: job.invocationId,
        dueAt: timestampFromDate(job.dueAt),
        firedAt: timestampFromDate(firedAt),
      }),
      ...chain(job),
      occurredAt: firedAt,
    }),
  );
}

export function jobCancelledMessage(job: JobRow, cancelledAt: Date): BusMessage {
  return toBusMessage(
    newEnvelope({
      type: EVENT_TYPES.SCHEDULED_JOB_CANCELLED,
      payload: create(ScheduledJobCancelledSchema, {
        name: job.name,
        kind: KINDS[job.kind],
        invocationId: job.invocationId,
        cancelledAt: timestampFromDate(cancelledAt),
      }),
      ...chain(job),
      occurredAt: cancelledAt,
    }),
  );
}

export function jobRescheduledMessage(job: JobRow & { dueAt: Date }, at: Date): BusMessage {
  return toBusMessage(
    newEnvelope({
      type: EVENT_TYPES.SCHEDULED_JOB_RESCHEDULED,
      payload: create(ScheduledJobRescheduledSchema, {
        name: job.name,
        kind: KINDS[job.kind],
        invocationId: job.invocationId,
        dueAt: timestampFromDate(job.dueAt),
      }),
      ...chain(job),
      occurredAt: at,
    }),
  );
}

/** The run's ids, and the ScheduleJob's message chain when the job came from one. */
function chain(job: JobRow) {
  return {
    orgId: job.orgId,
    projectId: job.projectId,
    invocationId: job.invocationId,
    correlationId: job.correlationId ?? undefined,
    causationId: job.causationId ?? undefined,
    traceparent: job.traceparent ?? undefined,
  };
}
