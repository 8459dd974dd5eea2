export const JOB_STATUSES = ['SCHEDULED', 'FIRED', 'CANCELLED'] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];

export const JOB_KIND_NAMES = ['START_RUN', 'RESUME_RUN', 'RETRY_RUN'] as const;
export type JobKindName = (typeof JOB_KIND_NAMES)[number];

/** One job, as the scheduler keeps it (a row of `scheduled_jobs`, migration 1763700000201). */
export interface ScheduledJobEntity {
  name: string;
  kind: JobKindName;
  invocationId: string;
  orgId: string;
  projectId: string;
  /** Null only for a tombstone (cancelled before its ScheduleJob arrived). */
  dueAt: Date | null;
  status: JobStatus;
  correlationId: string | null;
  causationId: string | null;
  traceparent: string | null;
  createdAt: Date;
  updatedAt: Date;
  firedAt: Date | null;
  cancelledAt: Date | null;
}
