import { randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { createServiceDataSource } from '@runline/db';
import { migrateServices } from '@runline/runtime';
import { createTestDatabase, type TestDatabase } from '@runline/testing';
import { invocationService } from '../src/invocation.service.js';
import { create, fromBinary, GetInvocationMetricsReplySchema, GetInvocationMetricsRequestSchema, toBinary } from '@runline/contracts';
import { ReadRunMetricsHandler } from '../src/queries/read-run-metrics.handler.js';
import { listRunLogs, runMetrics } from '../src/queries/run-logs.repository.js';

/** A fresh database with the invocation schema migrated; `close` ends and drops it. */
interface InvocationDatabase {
  dataSource: DataSource;
  close(): Promise<void>;
}

async function openInvocationDatabase(): Promise<InvocationDatabase> {
  const database: TestDatabase = await createTestDatabase();
  await migrateServices([invocationService], database.url);
  const dataSource = createServiceDataSource({ url: database.url, schema: 'invocation', migrations: [] });
  await dataSource.initialize();
  return {
    dataSource,
    close: async () => {
      await dataSource.destroy();
      await database.drop();
    },
  };
}

interface ViewFields {
  status: string;
  createdAt: number;
  durationMs?: unknown;
  callbackAttempts?: unknown[];
  org?: string;
  project?: string;
}

/** A read-model row as the projector writes it (only what these queries read). */
async function insertView(dataSource: DataSource, fields: ViewFields & { org: string; project: string }): Promise<string> {
  const id = randomUUID();
  const createdAt = new Date(fields.createdAt).toISOString();
  const document = {
    invocationId: id,
    status: fields.status,
    mode: 'ASYNC',
    targetType: 'FLOW',
    triggerSource: 'WEBHOOK',
    createdAt,
    startedAt: null,
    completedAt: null,
    durationMs: fields.durationMs ?? null,
    errorMessage: null,
    scheduledFor: null,
    callbackAttempts: fields.callbackAttempts ?? [],
    requestPayload: { webhookSecret: '[REDACTED]' },
  };
  await dataSource.query(
    `INSERT INTO invocation_views (id, org_id, project_id, target_type, document, created_at) VALUES ($1, $2, $3, 'FLOW', $4, $5)`,
    [id, fields.org, fields.project, JSON.stringify(document), createdAt],
  );
  return id;
}

/**
 * The SQL of the console's logs and invocation health on a real PostgreSQL, on read-model rows
 * written directly: what the generated columns make of documents the e2e tests cannot produce
 * cheaply (callback outcomes, odd durations), exact figures, and that a run's transition stays
 * a HOT update despite the new columns and indexes.
 */
describe('run logs repository', () => {
  let database: InvocationDatabase;
  let dataSource: DataSource;
  const orgId = randomUUID();
  const projectId = randomUUID();
  const base = Date.parse('2025-03-10T00:00:00Z');

  const attempt = (outcome: string, final?: boolean) => ({ webhookId: 'w', attempt: 1, outcome, ...(final === undefined ? {} : { final }) });
  const view = (fields: ViewFields): Promise<string> => insertView(dataSource, { org: orgId, project: projectId, ...fields });

  beforeAll(async () => {
    database = await openInvocationDatabase();
    dataSource = database.dataSource;
  });
  afterAll(() => database?.close());

  it('generated columns: callback DELIVERED / FAILED / neither while retried, durations only when numeric', async () => {
    const ids = {
      delivered: await view({ status: 'SUCCEEDED', createdAt: base, durationMs: 10, callbackAttempts: [attempt('HTTP_ERROR', false), attempt('ACKNOWLEDGED', true)] }),
      failed: await view({ status: 'FAILED', createdAt: base + 1, durationMs: 20.6, callbackAttempts: [attempt('HTTP_ERROR', false), attempt('TIMEOUT', true)] }),
      retrying: await view({ status: 'SUCCEEDED', createdAt: base + 2, durationMs: 30, callbackAttempts: [attempt('HTTP_ERROR', false)] }),
      // Recorded before `final` existed: an unacknowledged attempt is counted as neither.
      legacy: await view({ status: 'SUCCEEDED', createdAt: base + 3, durationMs: '40', callbackAttempts: [attempt('HTTP_ERROR')] }),
      none: await view({ status: 'TIMEOUT', createdAt: base + 4, durationMs: 1000 }),
    };
    const rows: Array<{ id: string; callback_state: string | null; duration_ms: string | null; status: string }> = await dataSource.query(
      'SELECT id, callback_state, duration_ms, status FROM invocation_views WHERE id = ANY($1::uuid[])',
      [Object.values(ids)],
    );
    const byId = new Map(rows.map((row) => [row.id, row]));
    expect(byId.get(ids.delivered)).toMatchObject({ callback_state: 'DELIVERED', duration_ms: '10', status: 'SUCCEEDED' });
    expect(byId.get(ids.failed)).toMatchObject({ callback_state: 'FAILED', duration_ms: '21' });
    expect(byId.get(ids.retrying)).toMatchObject({ callback_state: null });
    expect(byId.get(ids.legacy)).toMatchObject({ callback_state: null, duration_ms: null });
    expect(byId.get(ids.none)).toMatchObject({ callback_state: null, duration_ms: '1000' });
  });

  it('metrics: exact totals, percentiles over finished runs, callbacks, zero-filled UTC day buckets, scoped to the organization', async () => {
    const day = 86_400_000;
    const scope = { orgId, projectId: randomUUID() };
    const at = (days: number, ms = 0) => base + days * day + ms;
    const project = scope.projectId;
    await view({ project, status: 'SUCCEEDED', createdAt: at(0, 5), durationMs: 100, callbackAttempts: [attempt('ACKNOWLEDGED', true)] });
    await view({ project, status: 'SUCCEEDED', createdAt: at(0, 6), durationMs: 300 });
    await view({ project, status: 'FAILED', createdAt: at(2, 1), durationMs: 200, callbackAttempts: [attempt('REFUSED', true)] });
    await view({ project, status: 'TIMEOUT', createdAt: at(2, 2), durationMs: 5000 });
    await view({ project, status: 'CANCELLED', createdAt: at(2, 3) });
    await view({ project, status: 'RUNNING', createdAt: at(2, 4) });
    await view({ project, status: 'SCHEDULED', createdAt: at(2, 5) });
    // Outside the window, and another organization's run in the same project id: not counted.
    await view({ project, status: 'FAILED', createdAt: at(3), durationMs: 1 });
    await view({ project, org: randomUUID(), status: 'FAILED', createdAt: at(1), durationMs: 1 });

    const metrics = await runMetrics(dataSource, scope, { from: new Date(at(0)), to: new Date(at(3)), bucket: 'day' });
    expect(metrics.totals).toEqual({ triggered: 7, succeeded: 2, failed: 1, timeout: 1, cancelled: 1, inProgress: 2, waiting: 0 });
    expect(metrics.waitingByReason).toEqual({ concurrency: 0, throttle: 0, debounce: 0, project: 0 });
    // Finished with a duration: 100, 200, 300, 5000 → median 250, p95 = 300 + 0.85 × 4700.
    expect(metrics.medianDurationMs).toBe(250);
    expect(metrics.p95DurationMs).toBe(Math.round(300 + 0.85 * 4700));
    expect(metrics.callbacks).toEqual({ delivered: 1, failed: 1 });
    expect(metrics.series).toEqual([
      { start: '2025-03-10T00:00:00.000Z', triggered: 2, succeeded: 2, failed: 0 },
      { start: '2025-03-11T00:00:00.000Z', triggered: 0, succeeded: 0, failed: 0 },
      { start: '2025-03-12T00:00:00.000Z', triggered: 5, succeeded: 0, failed: 1 },
    ]);
    expect(metrics.recent.map((row) => row.status)).toEqual(['SCHEDULED', 'RUNNING', 'CANCELLED', 'TIMEOUT', 'FAILED', 'SUCCEEDED', 'SUCCEEDED']);

    const otherOrg = await runMetrics(dataSource, { orgId: randomUUID(), projectId: project }, { from: new Date(at(0)), to: new Date(at(3)), bucket: 'hour' });
    expect(otherOrg.totals.triggered).toBe(0);
  });

  it('metrics: a percentile halfway between two milliseconds rounds up (as the README says), not to the even one', async () => {
    const scope = { orgId, projectId: randomUUID() };
    const at = base + 20 * 86_400_000;
    // Median of 10 and 11 is 10.5 → 11; round-half-to-even (PostgreSQL's for double precision) would give 10.
    for (const [offset, durationMs] of [10, 11].entries()) await view({ project: scope.projectId, status: 'SUCCEEDED', createdAt: at + offset, durationMs });
    const metrics = await runMetrics(dataSource, scope, { from: new Date(at), to: new Date(at + 1000), bucket: 'hour' });
    expect(metrics.medianDurationMs).toBe(11);
  });

  it('logs: runs created in the same microsecond page by id, without duplicates or gaps', async () => {
    const project = randomUUID();
    const ids: string[] = [];
    for (let i = 0; i < 7; i += 1) ids.push(await view({ project, status: 'SUCCEEDED', createdAt: base + 10 * 86_400_000 }));
    const seen: string[] = [];
    let after = null;
    do {
      const page: Awaited<ReturnType<typeof listRunLogs>> = await listRunLogs(dataSource, { orgId, projectId: project }, 2, after);
      seen.push(...page.rows.map((row) => row.invocationId));
      after = page.next;
    } while (after);
    expect(seen).toEqual([...ids].sort().reverse());
  });

  it('a change that keeps the status (a callback attempt) is a HOT update; a status change is not (the project-status index)', async () => {
    const id = await view({ status: 'QUEUED', createdAt: base });
    const runner = dataSource.createQueryRunner();
    await runner.connect();
    const update = async (fields: Record<string, unknown>) => {
      const [{ document }] = (await runner.query('SELECT document FROM invocation_views WHERE id = $1', [id])) as Array<{ document: Record<string, unknown> }>;
      await runner.query('UPDATE invocation_views SET document = $2, sequence = sequence + 1, updated_at = now() WHERE id = $1', [id, JSON.stringify({ ...document, ...fields })]);
    };
    const counts = async () =>
      ((await runner.query(
        `SELECT pg_stat_get_xact_tuples_updated('invocation_views'::regclass)::int AS updated,
                pg_stat_get_xact_tuples_hot_updated('invocation_views'::regclass)::int AS hot`,
      )) as Array<{ updated: number; hot: number }>)[0];
    try {
      await runner.startTransaction();
      await update({ status: 'RUNNING' });
      await update({ status: 'SUCCEEDED', durationMs: 12 });
      expect(await counts()).toEqual({ updated: 2, hot: 0 });
      await update({ callbackAttempts: [attempt('ACKNOWLEDGED', true)] });
      await update({ updatedAt: new Date().toISOString() });
      expect(await counts()).toEqual({ updated: 4, hot: 2 });
      await runner.commitTransaction();
    } finally {
      await runner.release();
    }
  });
});

/**
 * Its own database: the writer adds thousands of rows, which must not fill the pages the HOT
 * update test of the file above needs free.
 */
describe('invocation health while runs are being written', () => {
  let raceDatabase: InvocationDatabase;
  let raceDataSource: DataSource;
  const orgId = randomUUID();
  const base = Date.parse('2025-03-10T00:00:00Z');

  beforeAll(async () => {
    raceDatabase = await openInvocationDatabase();
    raceDataSource = raceDatabase.dataSource;
  });
  afterAll(() => raceDatabase?.close());

  it('metrics through the handler: `recent` and the totals are read in one snapshot while runs are being written', async () => {
    // Two snapshots let a run written between the statements appear in `recent` but not in the
    // totals. Run i is created at `at + i` ms, so the newest recent run must be run totals - 1.
    const scope = { orgId, projectId: randomUUID() };
    const at = base + 30 * 86_400_000;
    const handler = new ReadRunMetricsHandler(raceDataSource);
    const request = toBinary(
      GetInvocationMetricsRequestSchema,
      create(GetInvocationMetricsRequestSchema, { orgId, projectId: scope.projectId, from: new Date(at).toISOString(), to: new Date(at + 86_400_000).toISOString(), bucket: 'hour' }),
    );
    let writing = true;
    const writer = (async () => {
      for (let index = 0; writing && index < 3_000; index += 1) await insertView(raceDataSource, { org: orgId, project: scope.projectId, status: 'QUEUED', createdAt: at + index });
    })();
    const torn: Array<{ triggered: number; newest: number }> = [];
    try {
      for (let read = 0; read < 200; read += 1) {
        const reply = fromBinary(GetInvocationMetricsReplySchema, await handler.execute(request));
        const metrics = JSON.parse(reply.metricsJson) as { totals: { triggered: number }; recent: Array<{ createdAt: string }> };
        const newest = metrics.recent.length === 0 ? -1 : Date.parse(metrics.recent[0]!.createdAt) - at;
        if (newest !== metrics.totals.triggered - 1) torn.push({ triggered: metrics.totals.triggered, newest });
      }
    } finally {
      writing = false;
      await writer;
    }
    expect(torn).toEqual([]);
  });
});
