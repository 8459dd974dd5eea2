import type { EntityManager } from 'typeorm';
import { returningRows } from '@runline/db';
import type { JobKindName, JobStatus } from '../entities/scheduled-job.entity.js';

/** A job as a command describes it. `dueAt` is null only for a tombstone. */
export interface JobFields {
  name: string;
  kind: JobKindName;
  invocationId: string;
  orgId: string;
  projectId: string;
  dueAt: Date | null;
  correlationId: string | null;
  causationId: string | null;
  traceparent: string | null;
}

/** A waiting (or just fired, cancelled or moved) job as read back from its row. */
export type JobRow = JobFields;

/** A job this replica claimed and marked FIRED. */
export type ClaimedJob = JobFields & { dueAt: Date };

interface RawJobRow {
  name: string;
  kind: JobKindName;
  invocation_id: string;
  org_id: string;
  project_id: string;
  due_at: Date | null;
  correlation_id: string | null;
  causation_id: string | null;
  traceparent: string | null;
}

const COLUMNS = 'name, kind, invocation_id, org_id, project_id, due_at, correlation_id, causation_id, traceparent';

/**
 * Inserts a job unless its name is known (a redelivered ScheduleJob, or one that arrives after
 * its job was cancelled or moved): true if it was inserted.
 */
export async function insertJob(manager: EntityManager, job: JobFields, status: 'SCHEDULED' | 'CANCELLED', at: Date): Promise<boolean> {
  const inserted = returningRows<{ name: string }>(
    await manager.query(
      `INSERT INTO scheduled_jobs (${COLUMNS}, status, created_at, updated_at, cancelled_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $11, $12)
       ON CONFLICT (name) DO NOTHING
       RETURNING name`,
      [
        job.name,
        job.kind,
        job.invocationId,
        job.orgId,
        job.projectId,
        job.dueAt,
        job.correlationId,
        job.causationId,
        job.traceparent,
        status,
        at,
        status === 'CANCELLED' ? at : null,
      ],
    ),
  );
  return inserted.length === 1;
}

/**
 * Claims up to `limit` waiting jobs due at or before `horizon`, earliest first, and marks them
 * FIRED at `firedAt`, in the caller's transaction. Rows another transaction holds (another
 * replica's pass, a cancel) are skipped, and the status is checked again on the locked row, so
 * a job is fired by one pass only and never after it was cancelled.
 */
export async function claimDueJobs(manager: EntityManager, horizon: Date, firedAt: Date, limit: number): Promise<ClaimedJob[]> {
  // `= ANY(ARRAY(…))` runs the locking subquery once, then reads the rows by primary key (`IN`
  // may be planned as a join that scans the table). The status check on the locked rows is
  // spelled NOT IN so it cannot match the partial index: without fresh statistics the planner
  // would otherwise AND in a scan of every waiting job.
  const rows = returningRows<RawJobRow>(
    await manager.query(
      `UPDATE scheduled_jobs SET status = 'FIRED', fired_at = $2, updated_at = $2
        WHERE name = ANY(ARRAY(
                SELECT name FROM scheduled_jobs
                 WHERE status = 'SCHEDULED' AND due_at <= $1
                 ORDER BY due_at
                 LIMIT $3
                 FOR UPDATE SKIP LOCKED))
          AND status NOT IN ('FIRED', 'CANCELLED')
        RETURNING ${COLUMNS}`,
      [horizon, firedAt, limit],
    ),
  );
  return rows.map(jobOf).filter((job): job is ClaimedJob => job.dueAt !== null).sort((a, b) => a.dueAt.getTime() - b.dueAt.getTime());
}

/** The earliest due time of a waiting job, or null (one step down the partial index). */
export async function nextDueAt(manager: EntityManager): Promise<Date | null> {
  const rows = returningRows<{ due_at: Date }>(
    await manager.query(`SELECT due_at FROM scheduled_jobs WHERE status = 'SCHEDULED' ORDER BY due_at LIMIT 1`),
  );
  return rows[0]?.due_at ?? null;
}

/** Cancels the job if it is waiting; the row lock decides a race with a firing pass. */
export async function cancelWaitingJob(manager: EntityManager, name: string, at: Date): Promise<JobRow | null> {
  const [row] = returningRows<RawJobRow>(
    await manager.query(
      `UPDATE scheduled_jobs SET status = 'CANCELLED', cancelled_at = $2, updated_at = $2
        WHERE name = $1 AND status = 'SCHEDULED'
        RETURNING ${COLUMNS}`,
      [name, at],
    ),
  );
  return row ? jobOf(row) : null;
}

/** Moves the job to `dueAt` if it is waiting; returns it with the due time it had, or null. */
export async function moveWaitingJob(
  manager: EntityManager,
  name: string,
  dueAt: Date,
  at: Date,
): Promise<{ job: JobRow; previousDueAt: Date } | null> {
  // Locked first, so the due time it had is the one this move replaces.
  const [locked] = returningRows<{ due_at: Date }>(
    await manager.query(`SELECT due_at FROM scheduled_jobs WHERE name = $1 AND status = 'SCHEDULED' FOR UPDATE`, [name]),
  );
  if (!locked) return null;
  const [row] = returningRows<RawJobRow>(
    await manager.query(`UPDATE scheduled_jobs SET due_at = $2, updated_at = $3 WHERE name = $1 RETURNING ${COLUMNS}`, [name, dueAt, at]),
  );
  if (!row) throw new Error(`scheduled job ${name} vanished while locked`);
  return { job: jobOf(row), previousDueAt: locked.due_at };
}

/** The job's status, or null if no job has this name. */
export async function jobStatus(manager: EntityManager, name: string): Promise<JobStatus | null> {
  const [row] = returningRows<{ status: JobStatus }>(await manager.query('SELECT status FROM scheduled_jobs WHERE name = $1', [name]));
  return row?.status ?? null;
}

function jobOf(row: RawJobRow): JobRow {
  return {
    name: row.name,
    kind: row.kind,
    invocationId: row.invocation_id,
    orgId: row.org_id,
    projectId: row.project_id,
    dueAt: row.due_at,
    correlationId: row.correlation_id,
    causationId: row.causation_id,
    traceparent: row.traceparent,
  };
}

/**
 * Deletes up to `limit` jobs that FIRED or were CANCELLED before `endedBefore`, oldest first;
 * rows another transaction holds are left for the next round. Returns how many went.
 */
export async function pruneEndedJobs(manager: EntityManager, endedBefore: Date, limit: number): Promise<number> {
  const rows = returningRows<{ name: string }>(
    await manager.query(
      `DELETE FROM scheduled_jobs
        WHERE name = ANY(ARRAY(
                SELECT name FROM scheduled_jobs
                 WHERE status <> 'SCHEDULED' AND updated_at < $1
                 ORDER BY updated_at
                 LIMIT $2
                 FOR UPDATE SKIP LOCKED))
        RETURNING name`,
      [endedBefore, limit],
    ),
  );
  return rows.length;
}
