/**
 * The monthly quota's counters, `usage_counters`: one per organization with a quota and
 * period, locked by the transaction that records the organization's runs so the count is exact
 * under concurrency (the decisions are `monthly-quota.ts`'s). Organizations without a quota
 * never touch the table, so a problem with it cannot hold up their runs.
 */
import type { EntityManager } from 'typeorm';
import { returningRows } from '@runline/db';
import type { QuotaGroup, QuotaPeriod, QuotaPlan } from '../lifecycle/monthly-quota.js';
import type { NewInvocation } from './new-runs.repository.js';

/**
 * How long the quota step waits for a counter's lock (or the table's) before it gives up and
 * the request is answered 503. Far above a normal wait (one batch's transaction), far below
 * the gateway's request deadlines.
 */
export const QUOTA_LOCK_TIMEOUT_MS = 2000;

/**
 * What the re-check of a SCHEDULED run that comes up needs from the counters: the
 * organization's count in `period` (locked, in a transaction of its own: a savepoint when
 * `manager` is in one already) and whether the run itself was counted in it. Throws when the
 * counter cannot be read in time (the start is then retried).
 */
export function scheduledStartCount(manager: EntityManager, invocationId: string, orgId: string, period: QuotaPeriod): Promise<{ used: number; countedInPeriod: boolean }> {
  return manager.transaction(async (tx) => {
    const used = await withinSavepoint(tx, () => lockedUsage(tx, orgId, period));
    const rows: Array<{ counted: boolean }> = await tx.query(
      `SELECT created_at >= $2 AND created_at < $3 AS counted FROM invocations WHERE id = $1`,
      [invocationId, period.start, period.end],
    );
    return { used, countedInPeriod: rows[0]?.counted ?? false };
  });
}

/** The plans with a quota among `orgIds` (an organization without a copy yet is unlimited). */
export async function plansOf(manager: EntityManager, orgIds: string[]): Promise<Map<string, QuotaPlan>> {
  const rows: Array<{ org_id: string; monthly_quota: string; renewal_day: number | null }> = await manager.query(
    `SELECT org_id, monthly_quota, renewal_day FROM organization_copies WHERE org_id = ANY($1::uuid[]) AND monthly_quota IS NOT NULL`,
    [orgIds],
  );
  return new Map(rows.map((row) => [row.org_id, { limit: Number(row.monthly_quota), renewalDay: row.renewal_day }]));
}

/** Items whose idempotency key an earlier, committed request already holds: replays, not charged. */
export async function takenKeys(manager: EntityManager, items: NewInvocation[]): Promise<Set<string>> {
  const keyed = items.filter((item) => item.idempotency !== null);
  if (keyed.length === 0) return new Set();
  const rows: Array<{ id: string }> = await manager.query(
    `SELECT u.id FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::text[], $5::text[]) AS u(id, project_id, target_type, mode, key)
      WHERE EXISTS (SELECT 1 FROM idempotency_keys k
                     WHERE k.project_id = u.project_id AND k.target_type = u.target_type AND k.mode = u.mode AND k.key = u.key)`,
    [
      keyed.map((item) => item.id),
      keyed.map((item) => item.idempotency!.projectId),
      keyed.map((item) => item.idempotency!.targetType),
      keyed.map((item) => item.idempotency!.mode),
      keyed.map((item) => item.idempotency!.key),
    ],
  );
  return new Set(rows.map((row) => row.id));
}

/**
 * Locks the organization's counter for the period and returns its count, first building it
 * from the recorded runs when it is new or the plan changed since it was built. The lock is
 * held until the commit, so every later transaction sees this one's runs in its count.
 */
export async function lockedUsage(manager: EntityManager, orgId: string, period: QuotaPeriod): Promise<number> {
  const [row]: Array<{ used: string | null; stale: boolean }> = await manager.query(
    `INSERT INTO usage_counters AS c (org_id, period_start) VALUES ($1, $2)
     ON CONFLICT (org_id, period_start) DO UPDATE SET used = c.used
     RETURNING c.used, c.used IS NULL OR c.plan_changed_at IS DISTINCT FROM
       (SELECT o.plan_changed_at FROM organization_copies o WHERE o.org_id = $1) AS stale`,
    [orgId, period.start],
  );
  if (row && !row.stale && row.used !== null) return Number(row.used);
  const rebuilt = returningRows<{ used: string }>(
    await manager.query(
      `UPDATE usage_counters SET
         used = (SELECT count(*) FROM invocation_views v WHERE v.org_id = $1 AND v.created_at >= $2 AND v.created_at < $3),
         plan_changed_at = (SELECT o.plan_changed_at FROM organization_copies o WHERE o.org_id = $1)
       WHERE org_id = $1 AND period_start = $2 RETURNING used`,
      [orgId, period.start, period.end],
    ),
  );
  return Number(rebuilt[0]!.used);
}

/**
 * The count `lockedUsage` would return, read without a lock or a write (for the console's
 * plan page): the counter when it is current, otherwise the recorded runs it would be rebuilt
 * from. Organizations without a quota have no counter, so theirs is always the rebuild figure.
 */
export async function currentUsage(manager: EntityManager, orgId: string, period: QuotaPeriod): Promise<number> {
  const [row]: Array<{ used: string }> = await manager.query(
    `SELECT COALESCE(
       (SELECT c.used FROM usage_counters c
         WHERE c.org_id = $1 AND c.period_start = $2 AND c.used IS NOT NULL
           AND c.plan_changed_at IS NOT DISTINCT FROM (SELECT o.plan_changed_at FROM organization_copies o WHERE o.org_id = $1)),
       (SELECT count(*) FROM invocation_views v WHERE v.org_id = $1 AND v.created_at >= $2 AND v.created_at < $3)) AS used`,
    [orgId, period.start, period.end],
  );
  return Number(row!.used);
}

/** The renewal day of the organization's plan copy; null without one (the period starts on the 1st). */
export async function renewalDayOf(manager: EntityManager, orgId: string): Promise<number | null> {
  const rows: Array<{ renewal_day: number | null }> = await manager.query(`SELECT renewal_day FROM organization_copies WHERE org_id = $1`, [orgId]);
  return rows[0]?.renewal_day ?? null;
}

/** Adds `delta` (negative: a refund) to the group's counter, locked already. */
export async function addUsage(manager: EntityManager, group: QuotaGroup, delta: number): Promise<void> {
  await manager.query(`UPDATE usage_counters SET used = used + $3 WHERE org_id = $1 AND period_start = $2`, [group.orgId, group.period.start, delta]);
}

/**
 * Runs `work` under a savepoint with a short lock timeout: a failure undoes only its own
 * statements (the transaction goes on) and rethrows. The timeout applies to these statements
 * only; ROLLBACK TO restores it by itself, RELEASE keeps it, so it is reset by hand.
 */
export async function withinSavepoint<T>(manager: EntityManager, work: () => Promise<T>): Promise<T> {
  const rows: Array<{ previous: string }> = await manager.query(`SELECT current_setting('lock_timeout') AS previous`);
  const previous = rows[0]?.previous ?? '0';
  await manager.query('SAVEPOINT quota_check');
  try {
    await manager.query(`SELECT set_config('lock_timeout', $1, true)`, [`${QUOTA_LOCK_TIMEOUT_MS}ms`]);
    const result = await work();
    await manager.query('RELEASE SAVEPOINT quota_check');
    await manager.query(`SELECT set_config('lock_timeout', $1, true)`, [previous]);
    return result;
  } catch (error) {
    await manager.query('ROLLBACK TO SAVEPOINT quota_check');
    throw error;
  }
}
