/**
 * Records new runs and the transitions of runs this process holds (claims and endings), and
 * reads what the monthly quota needs when a scheduled run comes up (and the earlier run, for a
 * new run whose idempotency key is taken). New runs of concurrent
 * requests share writes (group commit): one statement for the runs of organizations without a
 * monthly quota (the usual case); a transaction that counts the quota under a lock for the
 * others, so a refused request leaves nothing behind. Claims and endings of concurrent runs
 * share one statement too (`transitionKnownBatch`). Every quota decision is
 * `monthly-quota.ts`'s; this file only orders the reads and writes around them.
 */
import { Injectable, type OnModuleInit } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { GroupCommit, isTransientDatabaseError, TransactionRunner, type TransactionContext } from '@runline/db';
import { boundedCache } from '@runline/runtime';
import {
  grantOf,
  QUOTA_HINT_MS,
  quotaBound,
  quotaGroupsOf,
  quotaPeriodOf,
  refundsOf,
  scheduledStartVerdict as verdictOf,
  type QuotaFigures,
  type QuotaGroup,
  type ScheduledStartVerdict,
} from '../lifecycle/monthly-quota.js';
import type { InvocationDocument } from '../lifecycle/invocation.projector.js';
import { insertInvocations, insertInvocationsAtOnce, type InsertOutcome, type NewInvocation } from './new-runs.repository.js';
import { keyTakenAt, readDocument } from './run-reads.repository.js';
import { transitionKnownBatch, type KnownOutcome, type KnownTransition } from './run-transitions.repository.js';
import { addUsage, lockedUsage, plansOf, scheduledStartCount, takenKeys, withinSavepoint } from './usage-counters.repository.js';

/** Organizations hinted at most; past it the least recently hinted goes (and pays for both again). */
const QUOTA_HINTS_KEPT = 10_000;

/** What became of one request: recorded, answered from an earlier run, or refused by the quota. */
export type QuotaOutcome = InsertOutcome | { created: false; quotaExceeded: QuotaFigures } | { created: false; quotaUnavailable: string };

/** The run an earlier request with the same idempotency key made, as stored, and when it took the key. */
export interface EarlierRun {
  document: InvocationDocument;
  keyTakenAt: Date | null;
}

/** `QuotaOutcome` with the earlier run read, for a request whose idempotency key was taken. */
export type NewRunOutcome = Exclude<QuotaOutcome, { existingId: string }> | { created: false; earlier: EarlierRun };

@Injectable()
export class RunRecorder implements OnModuleInit {
  private commit!: GroupCommit<NewInvocation, QuotaOutcome>;
  private transitions!: GroupCommit<KnownTransition, { outcome: KnownOutcome } | { error: unknown }>;
  /** Organizations seen with a monthly quota in the last QUOTA_HINT_MS: their batches skip the one-statement attempt. */
  private readonly quotaBound = boundedCache<string, true>({ maxEntries: QUOTA_HINTS_KEPT, ttlMs: QUOTA_HINT_MS });

  constructor(private readonly transactions: TransactionRunner) {}

  onModuleInit(): void {
    // Two transactions in flight: while one commits, the next batch fills (larger batches, fewer
    // commits per run than with more parallel transactions; bench/README.md).
    // New runs of one turn share a statement (a burst of requests read off one socket).
    this.commit = new GroupCommit((items) => this.writeBatch(items), 2, 256, true);
    this.transitions = new GroupCommit((items) => this.writeTransitions(items), 2);
  }

  /**
   * `transitionKnown` with the transitions of other runs that arrive meanwhile: one statement
   * for all of them (a run claimed or ended alone is written at once).
   */
  async transitionKnown(item: KnownTransition): Promise<KnownOutcome> {
    const written = await this.transitions.submit(item);
    if ('error' in written) throw written.error;
    return written.outcome;
  }

  /**
   * One statement for the batch. If it fails for a reason that does not pass (a value the
   * database refuses), each transition is written on its own, so one bad run does not fail the
   * others of its batch; a passing error fails the batch, and each caller retries.
   */
  private async writeTransitions(items: KnownTransition[]): Promise<Array<{ outcome: KnownOutcome } | { error: unknown }>> {
    try {
      return (await transitionKnownBatch(this.transactions, items)).map((outcome) => ({ outcome }));
    } catch (error) {
      if (items.length === 1 || isTransientDatabaseError(error)) throw error;
      // One after another, so two transitions of one run still apply in their order.
      const written: Array<{ outcome: KnownOutcome } | { error: unknown }> = [];
      for (const item of items) {
        try {
          const [outcome] = await transitionKnownBatch(this.transactions, [item]);
          written.push({ outcome: outcome ?? null });
        } catch (itemError) {
          written.push({ error: itemError });
        }
      }
      return written;
    }
  }

  /**
   * Records a new run with the others of its batch. When its idempotency key is taken, the
   * earlier run is read instead: the request is answered with it.
   */
  async record(item: NewInvocation): Promise<NewRunOutcome> {
    const outcome = await this.commit.submit(item);
    if (!('existingId' in outcome)) return outcome;
    const manager = this.transactions.dataSource.manager;
    const [document, takenAt] = await Promise.all([readDocument(manager, outcome.existingId), item.idempotency ? keyTakenAt(manager, item.idempotency) : null]);
    if (!document) throw new Error(`idempotent replay: run ${outcome.existingId} has no read model`);
    return { created: false, earlier: { document, keyTakenAt: takenAt } };
  }

  /** Whether a SCHEDULED run that comes up may start under its organization's quota. */
  scheduledStartVerdict(invocationId: string, orgId: string): Promise<ScheduledStartVerdict> {
    return scheduledStartVerdict(this.transactions.dataSource.manager, invocationId, orgId);
  }

  /**
   * Organizations seen with a quota go straight to the transaction for a while, so their runs
   * do not pay for both.
   */
  private async writeBatch(items: NewInvocation[]): Promise<QuotaOutcome[]> {
    // Asked once per item: a hint that expires meanwhile must not put it in both lists, or neither.
    const hinted = items.map((item) => this.quotaBound.has(item.orgId));
    const counted = items.filter((_item, index) => hinted[index]);
    let free = items.filter((_item, index) => !hinted[index]);
    const outcomes = new Map<NewInvocation, QuotaOutcome>();
    if (free.length > 0) {
      const written = await insertInvocationsAtOnce(this.transactions, free);
      if ('outcomes' in written) {
        free.forEach((item, index) => outcomes.set(item, written.outcomes[index]!));
        free = [];
      } else {
        for (const orgId of written.quotaBound) this.quotaBound.set(orgId, true);
      }
    }
    const rest = [...counted, ...free];
    if (rest.length > 0) {
      const results = await this.transactions.run((tx) => recordWithinQuota(tx, rest));
      rest.forEach((item, index) => outcomes.set(item, results[index]!));
    }
    return items.map((item) => outcomes.get(item)!);
  }
}

/**
 * Records `items` (one group-commit batch) as insertInvocations does, within their
 * organizations' quotas, in the caller's transaction. A request whose idempotency key is
 * already taken is not charged (it is answered from the earlier run); one that is charged but
 * loses its key to a concurrent request is refunded before the commit. When the counters
 * cannot be locked in time, the quota-bound requests of the batch come back
 * `quotaUnavailable` and the others are recorded.
 */
export async function recordWithinQuota(tx: TransactionContext, items: readonly NewInvocation[]): Promise<QuotaOutcome[]> {
  const { manager } = tx;
  const plans = await plansOf(manager, [...new Set(items.map((item) => item.orgId))]);
  if (plans.size === 0) return insertInvocations(tx, items);

  const bound = quotaBound(items, plans);
  const taken = await takenKeys(manager, bound.map((index) => items[index]!));
  const groups = quotaGroupsOf(items, bound, plans, taken);

  const refused = new Map<number, QuotaOutcome>();
  const charged = new Map<number, QuotaGroup>();
  try {
    await withinSavepoint(manager, async () => {
      for (const group of groups) {
        const used = await lockedUsage(manager, group.orgId, group.period);
        const grant = grantOf(group, used);
        if (grant.granted > 0) await addUsage(manager, group, grant.granted);
        group.indices.forEach((index, position) => {
          if (position < grant.granted) charged.set(index, group);
          else refused.set(index, { created: false, quotaExceeded: grant.refused });
        });
      }
    });
  } catch (error) {
    charged.clear();
    const reason = error instanceof Error ? error.message : String(error);
    for (const group of groups) for (const index of group.indices) refused.set(index, { created: false, quotaUnavailable: reason });
  }

  const recorded = [...items.keys()].filter((index) => !refused.has(index));
  const results = await insertInvocations(tx, recorded.map((index) => items[index]!));
  const outcomes = new Map<number, QuotaOutcome>(refused);
  recorded.forEach((index, position) => outcomes.set(index, results[position]!));
  const refunds = refundsOf(
    charged,
    recorded.filter((_index, position) => !results[position]!.created),
  );
  for (const [group, count] of refunds) await addUsage(manager, group, -count);
  return items.map((_item, index) => outcomes.get(index)!);
}

/**
 * The spec's re-check when a SCHEDULED run comes up: may it start? An organization without a
 * quota costs one query. Throws when the counter cannot be read in time (the start is then
 * retried).
 */
export async function scheduledStartVerdict(manager: EntityManager, invocationId: string, orgId: string, now: Date = new Date()): Promise<ScheduledStartVerdict> {
  const plan = (await plansOf(manager, [orgId])).get(orgId);
  if (!plan) return { allowed: true };
  const period = quotaPeriodOf(now, plan.renewalDay);
  const { used, countedInPeriod } = await scheduledStartCount(manager, invocationId, orgId, period);
  return verdictOf(plan, period, used, countedInPeriod);
}
