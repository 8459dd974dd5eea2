/**
 * Every decision of the monthly quota (spec "Limits / Monthly quota"), pure: the billing
 * period, which requests of a batch are charged, how many of them the counter grants, what a
 * refusal says, the refund of a charged request that lost its idempotency key, and whether a
 * SCHEDULED run may start when it comes up. Only organizations whose plan has a quota are
 * counted; the counter itself is read and written by `usage-counters.repository.ts` under a
 * lock, so the count is exact under concurrency.
 */

/** An organization's plan, when it has a monthly quota (an organization without a copy yet is unlimited). */
export interface QuotaPlan {
  limit: number;
  renewalDay: number | null;
}

/**
 * The monthly quota's billing period. It starts at 00:00 UTC on the plan's renewal day (1-28,
 * so every month has it), or on the 1st of the month without one, and lasts until the same day
 * of the next month.
 */
export interface QuotaPeriod {
  start: Date;
  end: Date;
}

/** What a refusal tells the client. */
export interface QuotaFigures {
  limit: number;
  used: number;
  periodStart: Date;
}

/** The requests of one batch charged to one organization's counter for one period. */
export interface QuotaGroup {
  orgId: string;
  period: QuotaPeriod;
  limit: number;
  /** Positions in the batch. */
  indices: number[];
}

export function quotaPeriodOf(at: Date, renewalDay: number | null): QuotaPeriod {
  const day = renewalDay ?? 1;
  if (!Number.isInteger(day) || day < 1 || day > 28) throw new Error(`renewal day ${day} is not 1-28`);
  const year = at.getUTCFullYear();
  const month = at.getUTCMonth();
  const startMonth = at.getUTCDate() >= day ? month : month - 1;
  // Date.UTC rolls month -1 and 12 over into the neighbouring years.
  return { start: new Date(Date.UTC(year, startMonth, day)), end: new Date(Date.UTC(year, startMonth + 1, day)) };
}

/** Positions of the batch's requests whose organization has a quota. */
export function quotaBound(items: readonly { orgId: string }[], plans: ReadonlyMap<string, QuotaPlan>): number[] {
  return [...items.keys()].filter((index) => plans.has(items[index]!.orgId));
}

/**
 * The charged requests of a batch, grouped by organization and period, in the one order every
 * transaction locks them in (so two batches never wait on each other's counters). A request
 * whose idempotency key an earlier request already holds (`taken`) is a replay: not charged.
 */
export function quotaGroupsOf(
  items: readonly { id: string; orgId: string; occurredAt: Date }[],
  bound: readonly number[],
  plans: ReadonlyMap<string, QuotaPlan>,
  taken: ReadonlySet<string>,
): QuotaGroup[] {
  const groups = new Map<string, QuotaGroup>();
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
  return [...groups.entries()].sort(([a], [b]) => (a < b ? -1 : 1)).map(([, group]) => group);
}

/** How many of the group the counter (at `used`) grants, in batch order, and what the others are told. */
export function grantOf(group: QuotaGroup, used: number): { granted: number; refused: QuotaFigures } {
  const granted = Math.max(0, Math.min(group.indices.length, group.limit - used));
  return { granted, refused: { limit: group.limit, used: used + granted, periodStart: group.period.start } };
}

/** Per group, how many charged requests were not recorded (their key went to a concurrent request): given back before the commit. */
export function refundsOf(charged: ReadonlyMap<number, QuotaGroup>, notCreated: readonly number[]): Map<QuotaGroup, number> {
  const refunds = new Map<QuotaGroup, number>();
  for (const index of notCreated) {
    const group = charged.get(index);
    if (group) refunds.set(group, (refunds.get(group) ?? 0) + 1);
  }
  return refunds;
}

/** What a SCHEDULED run that comes up is told: it may start, or the quota is used up. */
export type ScheduledStartVerdict = { allowed: true } | { allowed: false; figures: QuotaFigures };

/**
 * The spec's re-check when a SCHEDULED run comes up. The run was counted when it was recorded;
 * if that was in the current period it is part of `used` and does not count against itself.
 */
export function scheduledStartVerdict(plan: QuotaPlan, period: QuotaPeriod, used: number, countedInPeriod: boolean): ScheduledStartVerdict {
  const others = used - (countedInPeriod ? 1 : 0);
  return others < plan.limit ? { allowed: true } : { allowed: false, figures: { limit: plan.limit, used, periodStart: period.start } };
}

/** How long an organization seen with a quota skips the one-statement path for new runs (which writes only for organizations without one). */
export const QUOTA_HINT_MS = 10_000;
