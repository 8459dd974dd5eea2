/**
 * The invocation service's side of the scheduler: the jobs runs wait for (their names, the
 * ScheduleJob command that goes out through the outbox with the state change that decided
 * it), and cancel/reschedule requests, which the scheduler's job row decides.
 */
import { Inject, Injectable } from '@nestjs/common';
import { BUS, type Bus, type BusMessage } from '@runline/bus';
import {
  CancelJobReplySchema,
  CancelJobRequestSchema,
  create,
  EVENT_TYPES,
  fromBinary,
  JobChangeOutcome,
  JobKind,
  newEnvelope,
  RescheduleJobReplySchema,
  RescheduleJobRequestSchema,
  SCHEDULER_REQUEST_SUBJECTS,
  ScheduleJobSchema,
  timestampFromDate,
  toBinary,
  toBusMessage,
} from '@runline/contracts';

/** How long a cancel or reschedule waits for the scheduler's answer. */
const SCHEDULER_REQUEST_TIMEOUT_MS = 5000;

/** Job names: one per thing a run waits for, unique across the run's life. */
export const jobNames = {
  /** A SCHEDULED run's start (runAt / delaySeconds); rescheduling keeps the name. */
  start: (invocationId: string) => `run-${invocationId}`,
  /** The next attempt of an automation run after a failed `failedAttempt`. */
  retry: (invocationId: string, failedAttempt: number) => `retry-${invocationId}-${failedAttempt + 1}`,
  /** The end of a Wait node; `step` (steps done so far) tells the waits of one run apart. */
  resume: (invocationId: string, step: number) => `resume-${invocationId}-${step}`,
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

/** Cancel and reschedule, answered by the scheduler (request/reply). */
@Injectable()
export class SchedulerClient {
  constructor(@Inject(BUS) private readonly bus: Bus) {}

  async cancel(job: JobRef): Promise<JobChangeOutcome> {
    const reply = await this.bus.request(SCHEDULER_REQUEST_SUBJECTS.CANCEL_JOB, toBinary(CancelJobRequestSchema, create(CancelJobRequestSchema, job)), {
      timeoutMs: SCHEDULER_REQUEST_TIMEOUT_MS,
    });
    return fromBinary(CancelJobReplySchema, reply).outcome;
  }

  async reschedule(job: JobRef, dueAt: Date): Promise<JobChangeOutcome> {
    const request = create(RescheduleJobRequestSchema, { ...job, dueAt: timestampFromDate(dueAt) });
    const reply = await this.bus.request(SCHEDULER_REQUEST_SUBJECTS.RESCHEDULE_JOB, toBinary(RescheduleJobRequestSchema, request), {
      timeoutMs: SCHEDULER_REQUEST_TIMEOUT_MS,
    });
    return fromBinary(RescheduleJobReplySchema, reply).outcome;
  }
}
