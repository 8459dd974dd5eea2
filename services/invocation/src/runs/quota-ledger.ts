/**
 * Monthly quotas (spec "Limits / Monthly quota"): runs recorded per organization and period,
 * checked and counted in the same transaction that records the runs, so the count is exact
 * under concurrency and a refused request leaves nothing behind. Only organizations whose plan
 * has a quota are counted: the others never touch `usage_counters`, so a problem with it cannot
 * hold up their runs.
 */
import type { EntityManager } from 'typeorm';
import type { TransactionContext } from '@runline/db';
import { insertInvocations, type InsertOutcome, type NewInvocation } from './invocation-store.js';
import { quotaPeriodOf, type QuotaPeriod } from './quota-period.js';

/**
 * How long the quota step waits for a counter's lock (or the table's) before it gives up and
 * the request is answered 503. Far above a normal wait (one batch's transaction), far below
 * the gateway's request deadlines.
 */
export const QUOTA_LOCK_TIMEOUT_MS = 2000;

export interface QuotaFigures {
  limit: number;
  used: number;
  periodStart: Date;
}

/** What became of one request: recorded, answered from an earlier run, or refused by the quota. */
export type QuotaOutcome =
  | InsertOutcome
  | { created: false; quotaExceeded: QuotaFigures }
  | { created: false; quotaUnavailable: string };

interface Plan {
  limit: number;
  renewalDay: number | null;
}

interface Group {
  orgId: string;
  period: QuotaPeriod;
  limit: number;
  indices: number[];
}

/**
 * Records `items` (one group-commit batch) as insertInvocations does, within their
 * organizations' quotas. A request whose idempotency key is already taken is not charged (it
 * is answered from the earlier run); one that is charged but loses its key to a concurrent
 * request is refunded before the commit. When the counters cannot be locked in time, the
 * quota-bound requests of the batch come back `quotaUnavailable` and the others are recorded.
 */
export async function recordWithinQuota(tx: TransactionContext, items: readonly NewInvocation[]): Promise<QuotaOutcome[]> {
  const { manager } = tx;
  const plans = await plansOf(manager, [...new Set(items.map((item) => item.orgId))]);
  if (plans.size === 0) return insertInvocations(tx, items);

  const bound = [...items.keys()].filter((index) => plans.has(items[index]!.orgId));
  const taken = await takenKeys(manager, bound.map((index) => items[index]!));
  const groups = new Map<string, Group>();
  for (const index of bound) {
    const item = items[index]!;
    if (taken.has(item.id)) continue;
    const plan = plans.get(item.orgId)!;
    const period = quotaPeriodOf(item.occurredAt, plan.renewalDay);
    const key = `${item.orgId}|${period.start.toISOString()}`;
    const group = groups.get(key) ?? { orgId: item.orgId, period, limit: plan.limit, indices: [] };
    group.indices.push(index);
    groups.set(key, group);
  }

  const refused = new Map<number, QuotaOutcome>();
  const charged = new Map<number, Group>();
  // One order for every transaction, so two batches never wait on each other's counters.
  const ordered = [...groups.entries()].sort(([a], [b]) => (a < b ? -1 : 1)).map(([, group]) => group);
  try {
    await withinSavepoint(manager, async () => {
      for (const group of ordered) {
        const used = await lockedUsage(manager, group.orgId, group.period);
        const granted = Math.max(0, Math.min(group.indices.length, group.limit - used));
        if (granted > 0) await addUsage(manager, group, granted);
        group.indices.forEach((index, position) => {
          if (position < granted) charged.set(index, group);
          else refused.set(index, { created: false, quotaExceeded: { limit: group.limit, used: used + granted, periodStart: group.period.start } });
        });
      }
    });
  } catch (error) {
    charged.clear();
    const reason = error instanceof Error ? error.message : String(error);
    for (const group of ordered) for (const index of group.indices) refused.set(index, { created: false, quotaUnavailable: reason });
  }

  const recorded = [...items.keys()].filter((index) => !refused.has(index));
  const results = await insertInvocations(tx, recorded.map((index) => items[index]!));
  const outcomes = new Map<number, QuotaOutcome>(refused);
  const refunds = new Map<Group, number>();
  recorded.forEach((index, position) => {
    const result = results[position]!;
    outcomes.set(index, result);
    const group = charged.get(index);
    if (group && !result.created) refunds.set(group, (refunds.get(group) ?? 0) + 1);
  });
  for (const [group, count] of refunds) await addUsage(manager, group, -count);
  return items.map((_item, index) => outcomes.get(index)!);
}

/**
 * The spec's re-check when a SCHEDULED run comes up: may it start? The run was counted when it
 * was recorded; if that was in the current period it is part of `used` and does not count
 * against itself. An organization without a quota costs one query; the counter is read in a
 * transaction of its own (a savepoint when `manager` is in one already). Throws when the
 * counter cannot be read in time (the start is then retried).
 */
export async function scheduledStartVerdict(
  manager: EntityManager,
  invocationId: string,
  orgId: string,
  now: Date = new Date(),
): Promise<{ allowed: true } | { allowed: false; figures: QuotaFigures }> {
  const plan = (await plansOf(manager, [orgId])).get(orgId);
  if (!plan) return { allowed: true };
  const period = quotaPeriodOf(now, plan.renewalDay);
  return manager.transaction(async (tx) => {
    const used = await withinSavepoint(tx, () => lockedUsage(tx, orgId, period));
    const rows: Array<{ counted: boolean }> = await tx.query(
      `SELECT created_at >= $2 AND created_at < $3 AS counted FROM invocations WHERE id = $1`,
      [invocationId, period.start, period.end],
    );
    const others = used - (rows[0]?.counted ? 1 : 0);
    return others < plan.limit ? { allowed: true } : { allowed: false, figures: { limit: plan.limit, used, periodStart: period.start } };
  });
}

/** The plans with a quota among `orgIds` (an organization without a copy yet is unlimited). */
async function plansOf(manager: EntityManager, orgIds: string[]): Promise<Map<string, Plan>> {
  const rows: Array<{ org_id: string; monthly_quota: string; renewal_day: number | null }> = await manager.query(
    `SELECT org_id, monthly_quota, renewal_day FROM organization_copies WHERE org_id = ANY($1::uuid[]) AND monthly_quota IS NOT NULL`,
    [orgIds],
  );
  return new Map(rows.map((row) => [row.org_id, { limit: Number(row.monthly_quota), renewalDay: row.renewal_day }]));
}

/** Items whose idempotency key an earlier, committed request already holds: replays, not charged. */
async function takenKeys(manager: EntityManager, items: NewInvocation[]): Promise<Set<string>> {
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
async function lockedUsage(manager: EntityManager, orgId: string, period: QuotaPeriod): Promise<number> {
  const [row]: Array<{ used: string | null; stale: boolean }> = await manager.query(
    `INSERT INTO usage_counters AS c (org_id, period_start) VALUES ($1, $2)
     ON CONFLICT (org_id, period_start) DO UPDATE SET used = c.used
     RETURNING c.used, c.used IS NULL OR c.plan_changed_at IS DISTINCT FROM
       (SELECT o.plan_changed_at FROM organization_copies o WHERE o.org_id = $1) AS stale`,
    [orgId, period.start],
  );
  if (row && !row.stale && row.used !== null) return Number(row.used);
  // An UPDATE answers [rows, affected count] through TypeORM.
  const [rebuilt]: [Array<{ used: string }>, number] = await manager.query(
    `UPDATE usage_counters SET
       used = (SELECT count(*) FROM invocation_views v WHERE v.org_id = $1 AND v.created_at >= $2 AND v.created_at < $3),
       plan_changed_at = (SELECT o.plan_changed_at FROM organization_copies o WHERE o.org_id = $1)
     WHERE org_id = $1 AND period_start = $2 RETURNING used`,
    [orgId, period.start, period.end],
  );
  return Number(rebuilt[0]!.used);
}

async function addUsage(manager: EntityManager, group: Group, delta: number): Promise<void> {
  await manager.query(`UPDATE usage_counters SET used = used + $3 WHERE org_id = $1 AND period_start = $2`, [group.orgId, group.period.start, delta]);
}

/**
 * Runs `work` under a savepoint with a short lock timeout: a failure undoes only its own
 * statements (the transaction goes on) and rethrows. The timeout applies to these statements
 * only; ROLLBACK TO restores it by itself, RELEASE keeps it, so it is reset by hand.
 */
async function withinSavepoint<T>(manager: EntityManager, work: () => Promise<T>): Promise<T> {
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
