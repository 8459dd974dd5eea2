/**
 * The fair start queue in PostgreSQL (DESIGN section 13; runs/fair-starts.ts): QUEUED runs that
 * arrived while the process's run slots were taken, in the order they start: by tag, then by
 * arrival (seq). A project's run is tagged one after the project's last waiting run, or, when
 * the project has none waiting, with the smallest tag waiting (the round under way): start-time
 * fair queuing, which is deficit round robin by project with a quantum of one run. Projects
 * with runs waiting thus take turns, and a project whose run arrives behind a backlog of 20,000
 * runs of another starts it in the round under way, not after the backlog.
 */
import { returningRows, type TransactionContext, type TransactionRunner } from '@runline/db';

export interface QueuedStart {
  invocationId: string;
  projectId: string;
}

/**
 * Queues `starts` (in arrival order: rows are inserted so, which numbers their seq, the order
 * among runs with one tag). A transaction-level lock per project, taken in one order, makes two
 * replicas queueing runs of one project number them one after the other.
 */
export async function queueStarts(transactions: TransactionRunner, starts: readonly QueuedStart[]): Promise<void> {
  const projects = [...new Set(starts.map((start) => start.projectId))].sort();
  await transactions.run(async ({ manager }) => {
    await manager.query(`SELECT count(pg_advisory_xact_lock(hashtextextended('start-queue:' || p, 0))) FROM (SELECT unnest($1::text[]) AS p ORDER BY 1) AS projects`, [projects]);
    await manager.query(
      `WITH input AS (
         SELECT x.invocation_id, x.project_id, x.n FROM unnest($1::uuid[], $2::uuid[]) WITH ORDINALITY AS x(invocation_id, project_id, n)
       ), head AS (
         SELECT coalesce(min(tag), 0) AS tag FROM start_queue
       ), last AS (
         SELECT p.project_id, (SELECT max(q.tag) FROM start_queue q WHERE q.project_id = p.project_id) AS tag
           FROM (SELECT DISTINCT project_id FROM input) AS p
       )
       INSERT INTO start_queue (invocation_id, project_id, tag)
       SELECT i.invocation_id, i.project_id, coalesce(l.tag, h.tag - 1) + row_number() OVER (PARTITION BY i.project_id ORDER BY i.n)
         FROM input i JOIN last l USING (project_id) CROSS JOIN head h
        ORDER BY i.n
       ON CONFLICT (invocation_id) DO NOTHING`,
      [starts.map((start) => start.invocationId), starts.map((start) => start.projectId)],
    );
  });
}

/**
 * Takes the next `limit` runs in the fair order for this replica to start: marked picked for
 * `leaseMs` (skipped by every other replica meanwhile, taken again after it if this replica
 * dies before it forgets them). In start order.
 */
export async function pickStarts(manager: TransactionContext['manager'], limit: number, leaseMs: number): Promise<QueuedStart[]> {
  const rows = returningRows<{ invocation_id: string; project_id: string; tag: string; seq: string }>(
    await manager.query(
      `UPDATE start_queue SET picked_until = now() + $2 * interval '1 millisecond'
        WHERE invocation_id = ANY(ARRAY(
                SELECT invocation_id FROM start_queue WHERE picked_until IS NULL OR picked_until < now()
                 ORDER BY tag, seq LIMIT $1 FOR UPDATE SKIP LOCKED))
          AND (picked_until IS NULL OR picked_until < now())
        RETURNING invocation_id, project_id, tag, seq`,
      [limit, leaseMs],
    ),
  );
  return rows
    .sort((a, b) => Number(a.tag) - Number(b.tag) || Number(a.seq) - Number(b.seq))
    .map((row) => ({ invocationId: row.invocation_id, projectId: row.project_id }));
}

/** Forgets runs that started, or no longer wait. */
export async function forgetStarts(manager: TransactionContext['manager'], invocationIds: readonly string[]): Promise<void> {
  await manager.query(`DELETE FROM start_queue WHERE invocation_id = ANY($1::uuid[])`, [invocationIds]);
}

/** Runs in the start queue now (a gauge). */
export async function queuedStartCount(manager: TransactionContext['manager']): Promise<number> {
  const [row] = (await manager.query(`SELECT count(*)::int AS n FROM start_queue`)) as Array<{ n: number }>;
  return row?.n ?? 0;
}
