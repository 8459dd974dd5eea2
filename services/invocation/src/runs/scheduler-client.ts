/**
 * Cancel and reschedule requests for a run's job, which the scheduler's job row decides
 * (request/reply).
 */
import { Inject, Injectable } from '@nestjs/common';
import { BUS, type Bus } from '@runline/bus';
import {
  CancelJobReplySchema,
  CancelJobRequestSchema,
  create,
  fromBinary,
  JobChangeOutcome,
  RescheduleJobReplySchema,
  RescheduleJobRequestSchema,
  SCHEDULER_REQUEST_SUBJECTS,
  timestampFromDate,
  toBinary,
} from '@runline/contracts';
import type { JobRef } from '../lifecycle/scheduler-jobs.js';

/** How long a cancel or reschedule waits for the scheduler's answer. */
const SCHEDULER_REQUEST_TIMEOUT_MS = 5000;

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
