/**
 * Reads of runs: the state row, with the run's sequence and read model when the caller goes on
 * to change it (`KnownRun`), and the read model alone.
 */
import type { EntityManager } from 'typeorm';
import { isUuid } from '@runline/contracts';
import type { RunModeName, TargetType } from '../lifecycle/invocation-event.js';
import type { InvocationDocument } from '../lifecycle/invocation.projector.js';
import type { InvocationStatus, Lease } from '../lifecycle/run-lifecycle.js';
import type { IdempotencyKey } from './new-runs.repository.js';
import type { KnownRun } from './run-transitions.repository.js';

/** The state row of one run. */
export interface InvocationRow {
  id: string;
  orgId: string;
  projectId: string;
  targetType: TargetType;
  mode: RunModeName;
  status: InvocationStatus;
  attempt: number;
  maxAttempts: number;
  sealedPlan: string;
  sealedResumeState: string | null;
  waitingJob: string | null;
  /** The run with its sequence and document, when this process has them (`transitionKnown`). */
  known?: KnownRun | null;
  /** The lease this process just took the run under, when it did. */
  lease?: Lease | null;
  /** The run's sequence right after this process claimed it (its Started or Resumed), when `known` is not kept. */
  claimedSequence?: number;
}

export async function readInvocation(manager: EntityManager, id: string): Promise<InvocationRow | null> {
  const rows: Array<Record<string, unknown>> = await manager.query(
    `SELECT id, org_id, project_id, target_type, mode, status, attempt, max_attempts, sealed_plan, sealed_resume_state, waiting_job
       FROM invocations WHERE id = $1`,
    [id],
  );
  const row = rows[0];
  return row ? invocationRowOf(row) : null;
}

/** The sequence of a run RUNNING under `leaseOwner`'s lease; null when it is not (any more). */
export async function runningSequence(manager: EntityManager, id: string, leaseOwner: string): Promise<number | null> {
  const rows: Array<{ sequence: number }> = await manager.query(`SELECT sequence FROM invocations WHERE id = $1 AND status = 'RUNNING' AND lease_owner = $2`, [id, leaseOwner]);
  return rows[0]?.sequence ?? null;
}

/** `readInvocation` with the run's sequence and document (`known`), in one read. */
export async function readKnownInvocation(manager: EntityManager, id: string): Promise<InvocationRow | null> {
  return (await readKnownInvocations(manager, [id]))[0] ?? null;
}

/** `readKnownInvocation` for many runs in one query: the rows of `ids` in their order, null for a run not found. */
export async function readKnownInvocations(manager: EntityManager, ids: readonly string[]): Promise<Array<InvocationRow | null>> {
  const rows: Array<Record<string, unknown>> = await manager.query(
    `SELECT i.id, i.org_id, i.project_id, i.target_type, i.mode, i.status, i.attempt, i.max_attempts, i.sealed_plan,
            i.sealed_resume_state, i.waiting_job, i.sequence, v.document
       FROM invocations i JOIN invocation_views v ON v.id = i.id WHERE i.id = ANY($1::uuid[])`,
    // An id that is no uuid is simply not found, rather than failing the other reads of the batch.
    [[...new Set(ids.filter((id) => isUuid(id)))]],
  );
  const found = new Map<string, InvocationRow>();
  for (const row of rows) {
    const invocation = invocationRowOf(row);
    const known = { id: invocation.id, orgId: invocation.orgId, projectId: invocation.projectId, sequence: row.sequence as number, document: row.document as InvocationDocument };
    found.set(invocation.id, { ...invocation, known });
  }
  return ids.map((id) => found.get(id) ?? null);
}

function invocationRowOf(row: Record<string, unknown>): InvocationRow {
  return {
    id: row.id as string,
    orgId: row.org_id as string,
    projectId: row.project_id as string,
    targetType: row.target_type as TargetType,
    mode: row.mode as RunModeName,
    status: row.status as InvocationStatus,
    attempt: row.attempt as number,
    maxAttempts: row.max_attempts as number,
    sealedPlan: row.sealed_plan as string,
    sealedResumeState: (row.sealed_resume_state as string | null) ?? null,
    waitingJob: (row.waiting_job as string | null) ?? null,
  };
}

/** When an idempotency key was taken (committed with its run); null when it is not. */
export async function keyTakenAt(manager: EntityManager, key: IdempotencyKey): Promise<Date | null> {
  const rows: Array<{ created_at: Date }> = await manager.query(
    'SELECT created_at FROM idempotency_keys WHERE project_id = $1 AND target_type = $2 AND mode = $3 AND key = $4',
    [key.projectId, key.targetType, key.mode, key.key],
  );
  return rows[0]?.created_at ?? null;
}

export async function readDocument(manager: EntityManager, id: string): Promise<InvocationDocument | null> {
  const rows: Array<{ document: InvocationDocument }> = await manager.query('SELECT document FROM invocation_views WHERE id = $1', [id]);
  return rows[0]?.document ?? null;
}

/**
 * RUNNING runs whose lease expired (their process stopped), oldest first, locked for the
 * caller's transaction; rows another replica is ending are skipped, and so are the runs the
 * calling process (`alive.owner`) is executing: it is alive, whatever their lease says.
 */
export async function expiredLeases(
  manager: EntityManager,
  limit: number,
  alive: { owner: string; executing: readonly string[] },
  now: Date = new Date(),
): Promise<Array<{ id: string; lease_owner: string }>> {
  return manager.query(
    `SELECT id, lease_owner FROM invocations
      WHERE status = 'RUNNING' AND lease_expires_at < $1
        AND NOT (lease_owner IS NOT DISTINCT FROM $2 AND id = ANY($3::uuid[]))
      ORDER BY lease_expires_at LIMIT ${limit} FOR UPDATE SKIP LOCKED`,
    [now, alive.owner, alive.executing],
  );
}
