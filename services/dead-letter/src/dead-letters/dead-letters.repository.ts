import type { EntityManager } from 'typeorm';
import { returningRows } from '@runline/db';

export type RunTargetName = 'FLOW' | 'AUTOMATION';

export interface NewDeadLetter {
  id: string;
  orgId: string;
  projectId: string;
  originKey: string;
  source: string;
  targetType: string;
  triggerKey: string;
  runTarget: RunTargetName;
  displayPayload: unknown;
  sealedPayload: string;
  failureReason: string;
  attemptCount: number;
  invocationId: string | null;
}

export interface DeadLetterRow {
  id: string;
  org_id: string;
  project_id: string;
  source: string;
  target_type: string;
  trigger_key: string;
  run_target: RunTargetName;
  display_payload: unknown;
  sealed_payload: string;
  failure_reason: string;
  attempt_count: number;
  replayed_at: Date | null;
  replay_status: string | null;
  created_at: Date;
  updated_at: Date;
}

const COLUMNS =
  'id, org_id, project_id, source, target_type, trigger_key, run_target, display_payload, sealed_payload, failure_reason, attempt_count, replayed_at, replay_status, created_at, updated_at';

/** Records the failure unless it is already recorded (same origin). */
export async function insertDeadLetter(manager: EntityManager, letter: NewDeadLetter, at: Date): Promise<void> {
  await manager.query(
    `INSERT INTO dead_letters (id, org_id, project_id, origin_key, source, target_type, trigger_key, run_target, display_payload, sealed_payload,
                               failure_reason, attempt_count, invocation_id, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $14)
     ON CONFLICT (origin_key) DO NOTHING`,
    [
      letter.id,
      letter.orgId,
      letter.projectId,
      letter.originKey,
      letter.source,
      letter.targetType,
      letter.triggerKey,
      letter.runTarget,
      letter.displayPayload === null || letter.displayPayload === undefined ? null : JSON.stringify(letter.displayPayload),
      letter.sealedPayload,
      letter.failureReason,
      letter.attemptCount,
      letter.invocationId,
      at,
    ],
  );
}

export interface ListFilter {
  projectId: string;
  source: string | null;
  unresolvedOnly: boolean;
  limit: number;
  offset: number;
}

/**
 * One page, newest first, and how many match in all. One statement, so the page and the total
 * come from one snapshot: a letter written between two statements would otherwise be counted
 * in a total whose page lacks it.
 */
export async function listDeadLetters(manager: EntityManager, filter: ListFilter): Promise<{ rows: DeadLetterRow[]; total: number }> {
  const found = (await manager.query(
    `WITH matching AS (
       SELECT ${COLUMNS} FROM dead_letters
        WHERE project_id = $1 AND ($2::text IS NULL OR source = $2) AND (NOT $3::boolean OR replayed_at IS NULL)
     )
     SELECT page.*, counted.total
       FROM (SELECT count(*)::int AS total FROM matching) AS counted
       LEFT JOIN LATERAL (SELECT * FROM matching ORDER BY created_at DESC, id DESC LIMIT $4 OFFSET $5) AS page ON true
      ORDER BY page.created_at DESC, page.id DESC`,
    [filter.projectId, filter.source, filter.unresolvedOnly, filter.limit, filter.offset],
  )) as Array<DeadLetterRow & { total: number }>;
  const total = found[0]?.total ?? 0;
  // An empty page still yields the one row of the count, with every page column null.
  const rows = found.filter((row) => row.id !== null).map(({ total: _total, ...row }) => row as DeadLetterRow);
  return { rows, total };
}

/**
 * Claims the event for its one replay: sets replayed_at if it was never replayed. Of concurrent
 * claims one wins (the row lock orders them and the loser sees replayed_at set). Null when the
 * project has no such event or it was replayed (or is being replayed) already.
 */
export async function claimReplay(manager: EntityManager, projectId: string, id: string, at: Date): Promise<DeadLetterRow | null> {
  const [row] = returningRows<DeadLetterRow>(
    await manager.query(
      `UPDATE dead_letters SET replayed_at = $3, updated_at = $3 WHERE id = $1 AND project_id = $2 AND replayed_at IS NULL RETURNING ${COLUMNS}`,
      [id, projectId, at],
    ),
  );
  return row ?? null;
}

export async function deadLetterExists(manager: EntityManager, projectId: string, id: string): Promise<boolean> {
  const rows = (await manager.query(`SELECT 1 FROM dead_letters WHERE id = $1 AND project_id = $2`, [id, projectId])) as unknown[];
  return rows.length > 0;
}

/** Records the replay's outcome once: the first writer wins (a recovery and a late original agree anyway). */
export async function recordReplay(manager: EntityManager, id: string, status: string, invocationId: string | null, at: Date): Promise<void> {
  await manager.query(`UPDATE dead_letters SET replay_status = $2, replay_invocation_id = $3, updated_at = $4 WHERE id = $1 AND replay_status IS NULL`, [
    id,
    status,
    invocationId,
    at,
  ]);
}

/** Gives a claim back (replayed_at cleared) while no outcome is recorded: the event may be replayed again. */
export async function releaseClaim(manager: EntityManager, id: string, at: Date): Promise<void> {
  await manager.query(`UPDATE dead_letters SET replayed_at = NULL, updated_at = $2 WHERE id = $1 AND replay_status IS NULL`, [id, at]);
}

/**
 * Replays claimed before `claimedBefore` whose outcome was never recorded: the process that
 * claimed them died (or lost its database) between the claim and the outcome.
 */
export async function interruptedReplays(manager: EntityManager, claimedBefore: Date, limit: number): Promise<DeadLetterRow[]> {
  return (await manager.query(
    `SELECT ${COLUMNS} FROM dead_letters WHERE replayed_at < $1 AND replay_status IS NULL ORDER BY replayed_at LIMIT $2`,
    [claimedBefore, limit],
  )) as DeadLetterRow[];
}

/** Which events a bulk replay takes: the project's, narrowed by the fields set (null: any). */
export interface BulkReplayFilter {
  projectId: string;
  source: string | null;
  targetType: string | null;
  /** created_at at or after. */
  from: Date | null;
  /** created_at at or before. */
  to: Date | null;
}

const UNREPLAYED_MATCHING = `project_id = $1 AND replayed_at IS NULL AND ($2::text IS NULL OR source = $2) AND ($3::text IS NULL OR target_type = $3)
  AND ($4::timestamptz IS NULL OR created_at >= $4) AND ($5::timestamptz IS NULL OR created_at <= $5)`;

const filterParams = (filter: BulkReplayFilter) => [filter.projectId, filter.source, filter.targetType, filter.from, filter.to];

/** How many of the project's events match the filter and were never replayed. */
export async function countUnreplayed(manager: EntityManager, filter: BulkReplayFilter): Promise<number> {
  const [row] = (await manager.query(`SELECT count(*)::int AS total FROM dead_letters WHERE ${UNREPLAYED_MATCHING}`, filterParams(filter))) as Array<{ total: number }>;
  return row?.total ?? 0;
}

/**
 * Claims the oldest matching event never replayed, as `claimReplay` does (replayed_at set, in
 * one statement): rows another claim holds are skipped, and replayed_at is checked again on the
 * locked row, so concurrent bulk replays take different events and a single replay of the same
 * event finds it claimed. Null when none is left.
 */
export async function claimNextUnreplayed(manager: EntityManager, filter: BulkReplayFilter, at: Date): Promise<DeadLetterRow | null> {
  const [row] = returningRows<DeadLetterRow>(
    await manager.query(
      `UPDATE dead_letters SET replayed_at = $6, updated_at = $6
        WHERE id = (SELECT id FROM dead_letters WHERE ${UNREPLAYED_MATCHING} ORDER BY created_at, id LIMIT 1 FOR UPDATE SKIP LOCKED)
          AND replayed_at IS NULL
        RETURNING ${COLUMNS}`,
      [...filterParams(filter), at],
    ),
  );
  return row ?? null;
}
