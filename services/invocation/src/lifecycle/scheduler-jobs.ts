/**
 * The jobs runs wait for at the scheduler: their names, and the ScheduleJob command that goes
 * out through the outbox with the state change that decided it.
 */
import type { BusMessage } from '@runline/bus';
import { create, EVENT_TYPES, JobKind, newEnvelope, ScheduleJobSchema, timestampFromDate, toBusMessage } from '@runline/contracts';

/** Job names: one per thing a run waits for, unique across the run's life. */
export const jobNames = {
  /** A SCHEDULED run's start (runAt / delaySeconds); rescheduling keeps the name. */
  start: (invocationId: string) => `run-${invocationId}`,
  /** The next attempt of an automation run after a failed `failedAttempt`. */
  retry: (invocationId: string, failedAttempt: number) => `retry-${invocationId}-${failedAttempt + 1}`,
  /** The end of a Wait node; `step` (steps done so far) tells the waits of one run apart. */
  resume: (invocationId: string, step: number) => `resume-${invocationId}-${step}`,
  /** The resume after an approval was decided; `step` tells the approvals of one run apart. */
  decided: (invocationId: string, step: number) => `approval-${invocationId}-${step}`,
};

export interface JobRef {
  name: string;
  kind: JobKind;
  invocationId: string;
  orgId: string;
  projectId: string;
}

/** The run a job belongs to. */
export type JobOwner = { id: string; orgId: string; projectId: string };

/** The job `name` of `kind` for `run`. */
export function jobRef(kind: JobKind, name: string, run: JobOwner): JobRef {
  return { name, kind, invocationId: run.id, orgId: run.orgId, projectId: run.projectId };
}

/** What a run waits for: the job's name (the run's `waiting_job`) and its ScheduleJob command. */
export function waitForJob(kind: JobKind, name: string, run: JobOwner, dueAt: Date): { name: string; command: BusMessage } {
  return { name, command: scheduleJobCommand(jobRef(kind, name, run), dueAt) };
}

/** The ScheduleJob command for the outbox. */
export function scheduleJobCommand(job: JobRef, dueAt: Date): BusMessage {
  return toBusMessage(
    newEnvelope({
      type: EVENT_TYPES.SCHEDULE_JOB,
      payload: create(ScheduleJobSchema, { ...job, dueAt: timestampFromDate(dueAt) }),
      orgId: job.orgId,
      projectId: job.projectId,
      invocationId: job.invocationId,
    }),
  );
}
