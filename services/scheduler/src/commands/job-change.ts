import type { EntityManager } from 'typeorm';
import { JobChangeOutcome } from '@runline/contracts';
import { retry } from '@runline/runtime';
import type { JobKindName, JobStatus } from '../entities/scheduled-job.entity.js';
import { jobStatus, type JobFields } from '../jobs/scheduled-jobs.repository.js';

/**
 * How often a cancel or reschedule tries when the job's ScheduleJob commits between its
 * statements (the row appears after the change found none). The second try always settles,
 * since a row that exists only ever leaves SCHEDULED; the third is a margin.
 */
export const RACE_ATTEMPTS = 3;

/** The answer for a job that no longer waits: FIRED and CANCELLED are final. Null for SCHEDULED. */
export function outcomeOfSettled(status: JobStatus): JobChangeOutcome | null {
  switch (status) {
    case 'FIRED':
      return JobChangeOutcome.ALREADY_FIRED;
    case 'CANCELLED':
      return JobChangeOutcome.ALREADY_CANCELLED;
    case 'SCHEDULED':
      return null;
  }
}

/** The two ways a cancel or reschedule can change a job; each returns what it did, or null. */
export interface JobChange<T> {
  /** Changes the job while it waits (the row lock decides a race with a firing pass). */
  changeWaiting(): Promise<T | null>;
  /** Records the changed job when its ScheduleJob has not arrived yet; null if it arrived meanwhile. */
  recordMissing(): Promise<T | null>;
}

/** The job's ScheduleJob committed between the change's statements: the change is tried again. */
class RacedWithScheduleJob extends Error {
  constructor(name: string) {
    super(`change of job ${name} kept racing with its ScheduleJob`);
  }
}

/**
 * Applies `change` to job `name` in the caller's transaction: CHANGED with what was done, or the
 * outcome of a job that no longer waits (fired, cancelled). Retries at once when the job's
 * ScheduleJob commits between the statements.
 */
export function decideJobChange<T>(
  manager: EntityManager,
  name: string,
  change: JobChange<T>,
): Promise<{ outcome: JobChangeOutcome; changed: T | null }> {
  const decide = async () => {
    const changed = await change.changeWaiting();
    if (changed !== null) return { outcome: JobChangeOutcome.CHANGED, changed };
    const status = await jobStatus(manager, name);
    if (status === null) {
      const recorded = await change.recordMissing();
      if (recorded !== null) return { outcome: JobChangeOutcome.CHANGED, changed: recorded };
      throw new RacedWithScheduleJob(name); // Its ScheduleJob committed meanwhile: change that.
    }
    const settled = outcomeOfSettled(status);
    if (settled !== null) return { outcome: settled, changed: null };
    // SCHEDULED although the change found it not waiting: it was inserted meanwhile.
    throw new RacedWithScheduleJob(name);
  };
  return retry(decide, { maxAttempts: RACE_ATTEMPTS, baseDelayMs: 0, retryable: (error) => error instanceof RacedWithScheduleJob });
}

/** The job a cancel or reschedule request describes, for a row made before its ScheduleJob. */
export function requestedJob(
  request: { name: string; invocationId: string; orgId: string; projectId: string },
  kind: JobKindName,
  dueAt: Date | null,
): JobFields {
  const { name, invocationId, orgId, projectId } = request;
  return { name, kind, invocationId, orgId, projectId, dueAt, correlationId: null, causationId: null, traceparent: null };
}
