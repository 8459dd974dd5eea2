/**
 * The fair start queue in PostgreSQL (DESIGN section 13; runs/fair-starts.ts): waiting runs that
 * arrived while the process's run slots were taken, in the order they start: by tag, then by
 * arrival (seq). A project's run is tagged one after the project's last waiting run, or, when
 * the project has none waiting, with the smallest tag waiting (the round under way): start-time
 * fair queuing, which is deficit round robin by project with a quantum of one run. Projects
 * with runs waiting thus take turns, and a project whose run arrives behind a backlog of 20,000
 * runs of another starts it in the round under way, not after the backlog.
 *
 * A run comes here by its RunInvocation command (QUEUED, waiting for no job) or by a fired
 * scheduler job (`JobWait`: a SCHEDULED run's time, a retry's, a Wait's end); a row remembers
 * which, so the start expects the run to wait just so, and is taken only once the job is due.
 */
import { returningRows, type TransactionContext, type TransactionRunner } from '@runline/db';

/** A run waiting for a scheduler job that fired: what its start expects of it. */
export interface JobWait {
  /** The status the run waits in: SCHEDULED (its start time), QUEUED (a retry's time) or SUSPENDED (a Wait's end). */
  status: 'SCHEDULED' | 'QUEUED' | 'SUSPENDED';
  /** The job: the start applies only while the run still waits for this very job. */
  waitingJob: string;
  /** The job's due time: the run is not taken before it (the scheduler fires a little early); null: at once. */
  dueAt: Date | null;
}

export interface QueuedStart {
  invocationId: string;
  projectId: string;
  /** Absent or null: a QUEUED run whose RunInvocation command came. */
  job?: JobWait | null;
}

/** Which start of a run a row is (a run may come here once per job it waits for). */
export type StartRef = Pick<QueuedStart, 'invocationId' | 'job'>;

/**
 * Queues `starts` (in arrival order: rows are inserted so, which numbers their seq, the order
 * among runs with one tag). A transaction-level lock per project, taken in one order, makes two
 * replicas queueing runs of one project number them one after the other.
 *
 * One row per run: a start that comes again (a redelivered command or job) changes nothing. A
 * start for a later job of the run (its retry, while the row of the start that ran is not
 * forgotten yet) replaces the row, anew in the order, but only if the run waits for that job
 * now: a late copy of an earlier message never replaces the start the run waits for.
 */
export async function queueStarts(transactions: TransactionRunner, starts: readonly QueuedStart[]): Promise<void> {
  const projects = [...new Set(starts.map((start) => start.projectId))].sort();
  await transactions.run(async ({ manager }) => {
    await manager.query(`SELECT count(pg_advisory_xact_lock(hashtextextended('start-queue:' || p, 0))) FROM (SELECT unnest($1::text[]) AS p ORDER BY 1) AS projects`, [projects]);
    // One statement may not meet one row twice (ON CONFLICT DO UPDATE): two starts of one run go in turn.
    for (const round of roundsOfDistinctRuns(starts)) await insertStarts(manager, round);
  });
}

async function insertStarts(manager: TransactionContext['manager'], starts: readonly QueuedStart[]): Promise<void> {
  await manager.query(
    `WITH input AS (
       SELECT x.invocation_id, x.project_id, x.expected_status, x.waiting_job, x.due_at, x.n
         FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::text[], $5::timestamptz[])
              WITH ORDINALITY AS x(invocation_id, project_id, expected_status, waiting_job, due_at, n)
     ), head AS (
       SELECT coalesce(min(tag), 0) AS tag FROM start_queue
     ), last AS (
       SELECT p.project_id, (SELECT max(q.tag) FROM start_queue q WHERE q.project_id = p.project_id) AS tag
         FROM (SELECT DISTINCT project_id FROM input) AS p
     )
     INSERT INTO start_queue AS q (invocation_id, project_id, tag, expected_status, waiting_job, due_at)
     SELECT i.invocation_id, i.project_id, coalesce(l.tag, h.tag - 1) + row_number() OVER (PARTITION BY i.project_id ORDER BY i.n), i.expected_status, i.waiting_job, i.due_at
       FROM input i JOIN last l USING (project_id) CROSS JOIN head h
      ORDER BY i.n
     ON CONFLICT (invocation_id) DO UPDATE
        SET tag = EXCLUDED.tag, expected_status = EXCLUDED.expected_status, waiting_job = EXCLUDED.waiting_job,
            due_at = EXCLUDED.due_at, picked_until = NULL, queued_at = now()
      WHERE q.waiting_job IS DISTINCT FROM EXCLUDED.waiting_job
        AND EXISTS (SELECT 1 FROM invocations i
                     WHERE i.id = EXCLUDED.invocation_id AND i.status = EXCLUDED.expected_status
                       AND i.waiting_job IS NOT DISTINCT FROM EXCLUDED.waiting_job)`,
    [
      starts.map((start) => start.invocationId),
      starts.map((start) => start.projectId),
      starts.map((start) => start.job?.status ?? 'QUEUED'),
      starts.map((start) => start.job?.waitingJob ?? null),
      starts.map((start) => start.job?.dueAt ?? null),
    ],
  );
}

/** `starts` in rounds in which each run appears once, each round in arrival order; an exact repeat is dropped. */
function roundsOfDistinctRuns(starts: readonly QueuedStart[]): QueuedStart[][] {
  const rounds: QueuedStart[][] = [];
  const seen = new Map<string, Set<string | null>>();
  for (const start of starts) {
    const jobs = seen.get(start.invocationId) ?? new Set<string | null>();
    const job = start.job?.waitingJob ?? null;
    if (jobs.has(job)) continue;
    const round = jobs.size;
    jobs.add(job);
    seen.set(start.invocationId, jobs);
    (rounds[round] ??= []).push(start);
  }
  return rounds;
}

/**
 * Takes the next `limit` runs in the fair order for this replica to start, of those due by
 * `now` (this process's clock, so a run taken is due for the start too): marked picked for
 * `leaseMs` (skipped by every other replica meanwhile, taken again after it if this replica
 * dies before it forgets them). In start order.
 */
export async function pickStarts(manager: TransactionContext['manager'], limit: number, leaseMs: number, now = new Date()): Promise<QueuedStart[]> {
  const rows = returningRows<{
    invocation_id: string;
    project_id: string;
    tag: string;
    seq: string;
    expected_status: JobWait['status'];
    waiting_job: string | null;
    due_at: Date | null;
  }>(
    await manager.query(
      `UPDATE start_queue SET picked_until = now() + $2 * interval '1 millisecond'
        WHERE invocation_id = ANY(ARRAY(
                SELECT invocation_id FROM start_queue
                 WHERE (picked_until IS NULL OR picked_until < now()) AND (due_at IS NULL OR due_at <= $3)
                 ORDER BY tag, seq LIMIT $1 FOR UPDATE SKIP LOCKED))
          AND (picked_until IS NULL OR picked_until < now())
        RETURNING invocation_id, project_id, tag, seq, expected_status, waiting_job, due_at`,
      [limit, leaseMs, now],
    ),
  );
  return rows
    .sort((a, b) => Number(a.tag) - Number(b.tag) || Number(a.seq) - Number(b.seq))
    .map((row) => ({
      invocationId: row.invocation_id,
      projectId: row.project_id,
      job: row.waiting_job === null ? null : { status: row.expected_status, waitingJob: row.waiting_job, dueAt: row.due_at },
    }));
}

/**
 * Forgets runs that started, or no longer wait: each row only while it is still that start (a
 * row replaced by the run's next job meanwhile stays).
 */
export async function forgetStarts(manager: TransactionContext['manager'], starts: readonly StartRef[]): Promise<void> {
  await manager.query(
    `DELETE FROM start_queue q USING unnest($1::uuid[], $2::text[]) AS f(invocation_id, waiting_job)
      WHERE q.invocation_id = f.invocation_id AND q.waiting_job IS NOT DISTINCT FROM f.waiting_job`,
    [starts.map((start) => start.invocationId), starts.map((start) => start.job?.waitingJob ?? null)],
  );
}

/** Runs in the start queue now (a gauge). */
export async function queuedStartCount(manager: TransactionContext['manager']): Promise<number> {
  const [row] = (await manager.query(`SELECT count(*)::int AS n FROM start_queue`)) as Array<{ n: number }>;
  return row?.n ?? 0;
}
