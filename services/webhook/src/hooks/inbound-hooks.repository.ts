import type { EntityManager } from 'typeorm';
import { isUuid } from '@runline/contracts';
import { returningRows, type TransactionRunner } from '@runline/db';

export interface HookRow {
  id: string;
  org_id: string;
  project_id: string;
  name: string;
  sealed_secret: string;
  status: 'ACTIVE' | 'REVOKED';
  rate_limit_per_minute: number;
  created_at: Date;
}

export interface NewHook {
  id: string;
  orgId: string;
  projectId: string;
  name: string;
  sealedSecret: string;
  rateLimitPerMinute: number;
}

export async function insertHook(manager: EntityManager, hook: NewHook, at: Date): Promise<HookRow> {
  const rows: HookRow[] = await manager.query(
    `INSERT INTO inbound_hooks (id, org_id, project_id, name, sealed_secret, status, rate_limit_per_minute, created_at)
     VALUES ($1, $2, $3, $4, $5, 'ACTIVE', $6, $7) RETURNING *`,
    [hook.id, hook.orgId, hook.projectId, hook.name, hook.sealedSecret, hook.rateLimitPerMinute, at],
  );
  return rows[0]!;
}

export async function hookById(manager: EntityManager, id: string): Promise<HookRow | null> {
  if (!isUuid(id)) return null;
  const rows: HookRow[] = await manager.query(`SELECT * FROM inbound_hooks WHERE id = $1`, [id]);
  return rows[0] ?? null;
}

/** Columns named, not `*`: a prepared statement must keep its result shape when a migration adds one. */
const HOOKS_BY_IDS = `SELECT id::text, org_id::text, project_id::text, name, sealed_secret, status, rate_limit_per_minute, created_at
  FROM inbound_hooks WHERE id = ANY($1::uuid[])`;

/**
 * The hooks with these ids, in their order (null where there is none): one prepared statement
 * for a batch of concurrent deliveries.
 */
export async function hooksByIds(runner: TransactionRunner, ids: readonly string[]): Promise<Array<HookRow | null>> {
  const valid = [...new Set(ids.filter((id) => isUuid(id)).map((id) => id.toLowerCase()))];
  const rows = valid.length === 0 ? [] : await runner.runStatement<HookRow[]>(HOOKS_BY_IDS, [valid]);
  const byId = new Map(rows.map((row) => [row.id, row]));
  return ids.map((id) => (isUuid(id) ? (byId.get(id.toLowerCase()) ?? null) : null));
}

export async function hooksOfProject(manager: EntityManager, projectId: string): Promise<HookRow[]> {
  return manager.query(`SELECT * FROM inbound_hooks WHERE project_id = $1 ORDER BY created_at DESC, id DESC`, [projectId]);
}

/** True when the project has the hook (revoked now or before); revoking twice changes nothing. */
export async function revokeHook(manager: EntityManager, projectId: string, id: string, at: Date): Promise<boolean> {
  if (!isUuid(id)) return false;
  const rows = returningRows<{ id: string }>(
    await manager.query(
      `UPDATE inbound_hooks SET status = 'REVOKED', revoked_at = COALESCE(revoked_at, $3)
        WHERE id = $1 AND project_id = $2 RETURNING id`,
      [id, projectId, at],
    ),
  );
  return rows.length > 0;
}
