import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
import type { DataSource } from 'typeorm';
import { GroupCommit, type TransactionRunner } from '@runline/db';
import type { RequestInfo } from '../src/lifecycle/invocation-event.js';
import { quotaPeriodOf } from '../src/lifecycle/monthly-quota.js';
import type { NewInvocation } from '../src/runs/new-runs.repository.js';
import { recordWithinQuota, scheduledStartVerdict, type QuotaOutcome } from '../src/runs/run-recorder.js';
import { QUOTA_LOCK_TIMEOUT_MS } from '../src/runs/usage-counters.repository.js';
import { openInvocationDatabase } from './support/invocation-database.js';
import { ASYNC_FLOW_REQUEST, newQueuedRun } from './support/queued-runs.js';

const request: RequestInfo = { ...ASYNC_FLOW_REQUEST, enrollmentPolicy: 'EVERY_MATCH' };

/** Monthly quotas on a real PostgreSQL: exact under concurrency, periods, replays, an unreachable counter. */
describe('monthly quota ledger', () => {
  let close: (() => Promise<void>) | undefined;
  let databaseUrl: string;
  let dataSource: DataSource;
  let transactions: TransactionRunner;
  let commit: GroupCommit<NewInvocation, QuotaOutcome>;

  const newRun = (orgId: string, options: { key?: string; at?: Date; status?: 'QUEUED' | 'SCHEDULED' } = {}): NewInvocation => {
    const projectId = `00000000-0000-4000-8000-${orgId.slice(-12)}`;
    return newQueuedRun(projectId, { orgId, key: options.key, at: options.at, status: options.status, request });
  };
  const setPlan = (orgId: string, monthlyQuota: number | null, renewalDay: number | null = null) =>
    dataSource.query(
      `INSERT INTO organization_copies (org_id, monthly_quota, renewal_day, plan_changed_at) VALUES ($1, $2, $3, clock_timestamp())
       ON CONFLICT (org_id) DO UPDATE SET monthly_quota = EXCLUDED.monthly_quota, renewal_day = EXCLUDED.renewal_day,
         plan_changed_at = EXCLUDED.plan_changed_at`,
      [orgId, monthlyQuota, renewalDay],
    );
  const runsOf = async (orgId: string) => Number((await dataSource.query(`SELECT count(*) AS n FROM invocations WHERE org_id = $1`, [orgId]))[0].n);
  const counted = async (orgId: string) =>
    (await dataSource.query(`SELECT period_start, used FROM usage_counters WHERE org_id = $1 ORDER BY period_start`, [orgId])).map(
      (row: { period_start: Date; used: string }) => ({ periodStart: row.period_start.toISOString(), used: Number(row.used) }),
    );

  beforeAll(async () => {
    ({ dataSource, transactions, close, url: databaseUrl } = await openInvocationDatabase());
    // As the service runs it: two transactions in flight, batches of concurrent requests.
    commit = new GroupCommit((items) => transactions.run((tx) => recordWithinQuota(tx, items)), 2);
  });
  afterAll(async () => {
    await close?.();
  });

  it('accepts exactly one of 50 concurrent requests when one run is left', async () => {
    const orgId = randomUUID();
    await setPlan(orgId, 5);
    for (let i = 0; i < 4; i++) expect((await commit.submit(newRun(orgId))).created).toBe(true);

    const outcomes = await Promise.all(Array.from({ length: 50 }, () => commit.submit(newRun(orgId))));
    expect(outcomes.filter((outcome) => outcome.created)).toHaveLength(1);
    const refused = outcomes.filter((outcome) => 'quotaExceeded' in outcome);
    expect(refused).toHaveLength(49);
    const periodStart = quotaPeriodOf(new Date(), null).start;
    for (const outcome of refused) expect(outcome).toEqual({ created: false, quotaExceeded: { limit: 5, used: 5, periodStart } });
    expect(await runsOf(orgId)).toBe(5);
    expect(await counted(orgId)).toEqual([{ periodStart: periodStart.toISOString(), used: 5 }]);
  });

  it('does not charge a request answered from an earlier run with the same idempotency key, even with the quota used up', async () => {
    const orgId = randomUUID();
    await setPlan(orgId, 1);
    const first = await commit.submit(newRun(orgId, { key: 'same' }));
    expect(first.created).toBe(true);
    const firstId = first.created ? first.document.invocationId : '';
    // Concurrent repeats of the key: replays, not refusals, and not counted.
    const repeats = await Promise.all(Array.from({ length: 10 }, () => commit.submit(newRun(orgId, { key: 'same' }))));
    for (const outcome of repeats) expect(outcome).toEqual({ created: false, existingId: firstId });
    expect(await commit.submit(newRun(orgId, { key: 'other' }))).toMatchObject({ created: false, quotaExceeded: { limit: 1, used: 1 } });
    expect(await counted(orgId)).toEqual([expect.objectContaining({ used: 1 })]);
  });

  it('refunds a charged request that lost its new idempotency key to a concurrent one', async () => {
    const orgId = randomUUID();
    await setPlan(orgId, 10);
    const key = `race-${randomUUID()}`;
    const outcomes = await Promise.all(Array.from({ length: 20 }, () => commit.submit(newRun(orgId, { key }))));
    expect(outcomes.filter((outcome) => outcome.created)).toHaveLength(1);
    expect(await counted(orgId)).toEqual([expect.objectContaining({ used: 1 })]);
  });

  it('starts a new count on the renewal day: runs before the boundary belong to the previous period', async () => {
    const orgId = randomUUID();
    const now = new Date();
    // A renewal day that makes today's period start at most 27 days ago and not in the future.
    const renewalDay = Math.min(now.getUTCDate(), 28);
    const boundary = quotaPeriodOf(now, renewalDay).start;
    await setPlan(orgId, 1, renewalDay);

    const lastOfPrevious = await commit.submit(newRun(orgId, { at: new Date(boundary.getTime() - 1) }));
    expect(lastOfPrevious.created).toBe(true);
    const firstOfCurrent = await commit.submit(newRun(orgId, { at: boundary }));
    expect(firstOfCurrent.created).toBe(true);
    expect(await commit.submit(newRun(orgId))).toEqual({ created: false, quotaExceeded: { limit: 1, used: 1, periodStart: boundary } });
    const previousStart = quotaPeriodOf(new Date(boundary.getTime() - 1), renewalDay).start;
    expect(await counted(orgId)).toEqual([
      { periodStart: previousStart.toISOString(), used: 1 },
      { periodStart: boundary.toISOString(), used: 1 },
    ]);
  });

  it('counts the runs recorded while the plan was unlimited once a quota is set', async () => {
    const orgId = randomUUID();
    await setPlan(orgId, null);
    for (let i = 0; i < 3; i++) expect((await commit.submit(newRun(orgId))).created).toBe(true);
    expect(await counted(orgId)).toEqual([]); // unlimited: no counter at all
    await setPlan(orgId, 4);
    expect((await commit.submit(newRun(orgId))).created).toBe(true);
    expect(await commit.submit(newRun(orgId))).toMatchObject({ created: false, quotaExceeded: { limit: 4, used: 4 } });
    // Raising the plan rebuilds the count from the recorded runs; it does not reset it.
    await setPlan(orgId, 5);
    expect((await commit.submit(newRun(orgId))).created).toBe(true);
    expect(await commit.submit(newRun(orgId))).toMatchObject({ created: false, quotaExceeded: { limit: 5, used: 5 } });
  });

  it('refuses quota-bound requests as unavailable when the counters cannot be locked, and records the others', async () => {
    const limited = randomUUID();
    const unlimited = randomUUID();
    await setPlan(limited, 100);
    const holder = new Client({ connectionString: databaseUrl });
    await holder.connect();
    try {
      await holder.query('BEGIN');
      await holder.query('LOCK TABLE invocation.usage_counters IN ACCESS EXCLUSIVE MODE');
      const startedAt = Date.now();
      const [refused, recorded] = await Promise.all([commit.submit(newRun(limited)), commit.submit(newRun(unlimited))]);
      expect(refused).toMatchObject({ created: false, quotaUnavailable: expect.stringContaining('lock timeout') });
      expect(recorded.created).toBe(true);
      expect(Date.now() - startedAt).toBeGreaterThanOrEqual(QUOTA_LOCK_TIMEOUT_MS - 50);
    } finally {
      await holder.query('ROLLBACK');
      await holder.end();
    }
    expect(await runsOf(limited)).toBe(0);
    expect(await runsOf(unlimited)).toBe(1);
    expect((await commit.submit(newRun(limited))).created).toBe(true);
  });

  it('lets a scheduled run start while the others leave room, counting it once', async () => {
    const orgId = randomUUID();
    await setPlan(orgId, 2);
    const scheduled = await commit.submit(newRun(orgId, { status: 'SCHEDULED' }));
    const id = scheduled.created ? scheduled.document.invocationId : '';
    // As the starter asks (no transaction of its own), and below within one (a savepoint).
    const verdict = () => scheduledStartVerdict(dataSource.manager, id, orgId);
    expect(await verdict()).toEqual({ allowed: true });
    expect((await commit.submit(newRun(orgId))).created).toBe(true);
    // Used 2 of 2, the scheduled run being one of them: it may still start.
    expect(await verdict()).toEqual({ allowed: true });
    await setPlan(orgId, 1);
    expect(await verdict()).toEqual({ allowed: false, figures: { limit: 1, used: 2, periodStart: quotaPeriodOf(new Date(), null).start } });
    // In a later period the run is not part of the count: it needs a free unit there.
    const nextPeriod = quotaPeriodOf(new Date(), null).end;
    const later = () => transactions.run(({ manager }) => scheduledStartVerdict(manager, id, orgId, new Date(nextPeriod.getTime() + 1000)));
    expect(await later()).toEqual({ allowed: true });
  });

  it('lets a scheduled run of an organization without a quota start without touching a counter', async () => {
    const orgId = randomUUID();
    await setPlan(orgId, null);
    const scheduled = await commit.submit(newRun(orgId, { status: 'SCHEDULED' }));
    const id = scheduled.created ? scheduled.document.invocationId : '';
    expect(await scheduledStartVerdict(dataSource.manager, id, orgId)).toEqual({ allowed: true });
    expect(await dataSource.query(`SELECT 1 FROM usage_counters WHERE org_id = $1`, [orgId])).toEqual([]);
  });
});
