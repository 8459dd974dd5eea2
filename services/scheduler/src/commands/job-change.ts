import { JobChangeOutcome } from '@runline/contracts';
import type { JobStatus } from '../entities/scheduled-job.entity.js';

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
