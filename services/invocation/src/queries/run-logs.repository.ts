import { isUuid } from '@runline/contracts';
import { WAIT_REASONS, type WaitReason } from '../lifecycle/flow-decision.js';

/**
 * The console's logs and invocation health, read from the read model (`invocation_views`) with
 * the generated columns and keyset indexes of migration 1763700000175. Every statement is
 * scoped by org_id. README "Invocation health: what each figure counts" defines the figures;
 * the SQL below is that definition.
 *
 * Depends on nothing but a `query` function, so bench/dashboard.bench.ts measures exactly
 * these functions on a plain pg pool.
 */

/** Anything that runs SQL: a TypeORM DataSource or EntityManager, a pg Pool. */
export interface Queryable {
  query(sql: string, parameters?: unknown[]): Promise<unknown>;
}

/** One run as the logs (and the metrics' `recent`) show it: no payload, result or trace. */
export interface RunLogRow {
  invocationId: string;
  projectId: string;
  status: string;
  mode: string;
  targetType: string;
  triggerSource: string;
  createdAt: string;
  startedAt: string | null;
  completedAt: string | null;
  durationMs: number | null;
  errorMessage: string | null;
  scheduledFor: string | null;
}

/** A keyset position in (created_at DESC, id DESC); createdAt is ISO 8601 UTC with microseconds. */
export interface RunLogPosition {
  createdAt: string;
  id: string;
}

/** Filters already validated by the gateway; undefined = no filter. */
export interface RunLogFilter {
  orgId: string;
  projectId?: string;
  status?: string;
  targetType?: string;
  mode?: string;
  triggerSource?: string;
  /** Created at or after. */
  from?: Date;
  /** Created strictly before. */
  to?: Date;
  /** An invocation id or an idempotency key. */
  q?: string;
}

export interface RunLogPage {
  rows: RunLogRow[];
  /** Position of the last row when more follow; null on the last page. */
  next: RunLogPosition | null;
}

/** Statuses after which a run never changes (spec "Invocation status"). */
export const FINAL_STATUSES = ['SUCCEEDED', 'FAILED', 'TIMEOUT', 'CANCELLED'] as const;

const ROW_COLUMNS = `
  v.id::text AS invocation_id, v.project_id::text AS project_id, v.status, v.mode, v.target_type, v.trigger_source,
  v.document->>'createdAt' AS created_at, v.document->>'startedAt' AS started_at, v.document->>'completedAt' AS completed_at,
  v.duration_ms, v.document->>'errorMessage' AS error_message, v.document->>'scheduledFor' AS scheduled_for,
  to_char(v.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS position`;

/**
 * One page of runs, newest first, strictly after `after`. Reads `limit + 1` rows to know
 * whether another page follows. The keyset (created_at, id) makes pages stable while runs
 * arrive: a new run sorts before every page already read, never into a later one.
 */
export async function listRunLogs(db: Queryable, filter: RunLogFilter, limit: number, after: RunLogPosition | null): Promise<RunLogPage> {
  const { where, parameters } = whereOf(filter);
  if (after) {
    parameters.push(after.createdAt, after.id);
    where.push(`(v.created_at, v.id) < ($${parameters.length - 1}::timestamptz, $${parameters.length}::uuid)`);
  }
  parameters.push(limit + 1);
  const rows = (await db.query(
    `SELECT ${ROW_COLUMNS} FROM invocation_views v WHERE ${where.join(' AND ')}
      ORDER BY v.created_at DESC, v.id DESC LIMIT $${parameters.length}`,
    parameters,
  )) as Array<Record<string, unknown>>;
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  const next = rows.length > limit && last ? { createdAt: last.position as string, id: last.invocation_id as string } : null;
  return { rows: page.map(logRowOf), next };
}

/** The figures of GET /external-invocations/metrics, except `from` and `to`. */
export interface RunMetrics {
  /** `waiting`: runs flow control holds back now, whatever the window (DESIGN section 13). */
  totals: { triggered: number; succeeded: number; failed: number; timeout: number; cancelled: number; inProgress: number; waiting: number };
  /** `totals.waiting` by what each run waits for (`trace.flowControl.waitingFor`). */
  waitingByReason: Record<WaitReason, number>;
  medianDurationMs: number | null;
  p95DurationMs: number | null;
  callbacks: { delivered: number; failed: number };
  series: Array<{ start: string; triggered: number; succeeded: number; failed: number }>;
  recent: RunLogRow[];
  /** With a project only: the runs of each Schedule trigger in the window (`scheduleFigures`). */
  schedules?: ScheduleFigures[];
}

/**
 * One Schedule trigger's runs in the window (DESIGN section 12, issue 31): fires that became
 * runs, how they ended, and how late they started (`startedAt − scheduledFor`, ms; the nominal
 * time, so a schedule's jitter counts as lateness here).
 */
export interface ScheduleFigures {
  id: string;
  fires: number;
  succeeded: number;
  failed: number;
  latenessP50Ms: number | null;
  latenessP99Ms: number | null;
  latenessMaxMs: number | null;
}

export type MetricsBucket = 'hour' | 'day';

/**
 * Invocation health over the runs created in [from, to): counts by status, duration
 * percentiles of the runs that finished with a duration, callback outcomes, a zero-filled series
 * of UTC buckets, and the 10 newest runs. One statement for the figures (the window's rows are
 * read once, from the keyset index and the generated columns, never the document), one for
 * `recent`; the caller runs both in one snapshot (a REPEATABLE READ transaction).
 */
export async function runMetrics(
  db: Queryable,
  scope: { orgId: string; projectId?: string },
  window: { from: Date; to: Date; bucket: MetricsBucket },
): Promise<RunMetrics> {
  const filter: RunLogFilter = { orgId: scope.orgId, projectId: scope.projectId, from: window.from, to: window.to };
  const { where, parameters } = whereOf(filter);
  parameters.push(window.bucket, window.from, window.to);
  const [bucket, from, to] = [parameters.length - 2, parameters.length - 1, parameters.length].map((n) => `$${n}`);
  const final = FINAL_STATUSES.map((status) => `'${status}'`).join(', ');
  const [figures] = (await db.query(
    `WITH runs AS MATERIALIZED (
       SELECT v.created_at, v.status, v.duration_ms, v.callback_state FROM invocation_views v WHERE ${where.join(' AND ')}
     ), buckets AS (
       SELECT date_trunc(${bucket}::text, created_at AT TIME ZONE 'UTC') AS start, count(*)::int AS triggered,
              count(*) FILTER (WHERE status = 'SUCCEEDED')::int AS succeeded, count(*) FILTER (WHERE status = 'FAILED')::int AS failed
         FROM runs GROUP BY 1
     )
     SELECT count(*)::int AS triggered,
            count(*) FILTER (WHERE status = 'SUCCEEDED')::int AS succeeded,
            count(*) FILTER (WHERE status = 'FAILED')::int AS failed,
            count(*) FILTER (WHERE status = 'TIMEOUT')::int AS timeout,
            count(*) FILTER (WHERE status = 'CANCELLED')::int AS cancelled,
            count(*) FILTER (WHERE status NOT IN (${final}))::int AS in_progress,
            round((percentile_cont(0.5) WITHIN GROUP (ORDER BY duration_ms) FILTER (WHERE status IN (${final}) AND duration_ms IS NOT NULL))::numeric)::bigint AS median,
            round((percentile_cont(0.95) WITHIN GROUP (ORDER BY duration_ms) FILTER (WHERE status IN (${final}) AND duration_ms IS NOT NULL))::numeric)::bigint AS p95,
            count(*) FILTER (WHERE callback_state = 'DELIVERED')::int AS callbacks_delivered,
            count(*) FILTER (WHERE callback_state = 'FAILED')::int AS callbacks_failed,
            (SELECT coalesce(json_agg(json_build_object(
                      'start', to_char(s.start, 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
                      'triggered', coalesce(b.triggered, 0), 'succeeded', coalesce(b.succeeded, 0), 'failed', coalesce(b.failed, 0))
                    ORDER BY s.start), '[]'::json)
               FROM generate_series(date_trunc(${bucket}::text, ${from}::timestamptz AT TIME ZONE 'UTC'),
                                    ${to}::timestamptz AT TIME ZONE 'UTC' - interval '1 microsecond',
                                    ('1 ' || ${bucket}::text)::interval) AS s(start)
               LEFT JOIN buckets b ON b.start = s.start) AS series
       FROM runs`,
    parameters,
  )) as Array<Record<string, unknown>>;
  if (!figures) throw new Error('runMetrics: the statement returned no row');
  const recent = await listRunLogs(db, filter, 10, null);
  const schedules = scope.projectId === undefined ? undefined : await scheduleFigures(db, filter);
  const waitingByReason = await waitingRuns(db, scope);
  return {
    totals: {
      triggered: figures.triggered as number,
      succeeded: figures.succeeded as number,
      failed: figures.failed as number,
      timeout: figures.timeout as number,
      cancelled: figures.cancelled as number,
      inProgress: figures.in_progress as number,
      waiting: WAIT_REASONS.reduce((sum, reason) => sum + waitingByReason[reason], 0),
    },
    waitingByReason,
    medianDurationMs: numberOrNull(figures.median),
    p95DurationMs: numberOrNull(figures.p95),
    callbacks: { delivered: figures.callbacks_delivered as number, failed: figures.callbacks_failed as number },
    series: figures.series as RunMetrics['series'],
    recent: recent.rows,
    ...(schedules === undefined ? {} : { schedules }),
  };
}

/** Runs of the organization (or project) that flow control holds back now (flow_waits of runs still waiting), by reason. */
async function waitingRuns(db: Queryable, scope: { orgId: string; projectId?: string }): Promise<Record<WaitReason, number>> {
  const rows = (await db.query(
    `SELECT w.reason, count(*)::int AS waiting FROM flow_waits w JOIN invocations i ON i.id = w.invocation_id AND i.status = w.from_status
      WHERE i.org_id = $1 AND ($2::uuid IS NULL OR w.project_id = $2::uuid) GROUP BY w.reason`,
    [scope.orgId, scope.projectId ?? null],
  )) as Array<{ reason: WaitReason; waiting: number }>;
  const counts = Object.fromEntries(WAIT_REASONS.map((reason) => [reason, 0])) as Record<WaitReason, number>;
  for (const row of rows) if (row.reason in counts) counts[row.reason] = row.waiting;
  return counts;
}

/** The runs of each Schedule trigger (`schedulerJobName` `schedule:<id>`) among those `filter` selects, by schedule id. */
async function scheduleFigures(db: Queryable, filter: RunLogFilter): Promise<ScheduleFigures[]> {
  const { where, parameters } = whereOf({ ...filter, triggerSource: 'SCHEDULE' });
  const lateness = `extract(epoch FROM ((v.document->>'startedAt')::timestamptz - (v.document->>'scheduledFor')::timestamptz)) * 1000`;
  const rows = (await db.query(
    `SELECT substr(v.document->>'schedulerJobName', 10) AS id, count(*)::int AS fires,
            count(*) FILTER (WHERE v.status = 'SUCCEEDED')::int AS succeeded, count(*) FILTER (WHERE v.status = 'FAILED')::int AS failed,
            round((percentile_cont(0.5) WITHIN GROUP (ORDER BY ${lateness}) FILTER (WHERE v.document->>'startedAt' IS NOT NULL))::numeric)::bigint AS p50,
            round((percentile_cont(0.99) WITHIN GROUP (ORDER BY ${lateness}) FILTER (WHERE v.document->>'startedAt' IS NOT NULL))::numeric)::bigint AS p99,
            round(max(${lateness}) FILTER (WHERE v.document->>'startedAt' IS NOT NULL)::numeric)::bigint AS max
       FROM invocation_views v
      WHERE ${where.join(' AND ')} AND v.document->>'schedulerJobName' LIKE 'schedule:%'
      GROUP BY 1 ORDER BY 1`,
    parameters,
  )) as Array<Record<string, unknown>>;
  return rows.map((row) => ({
    id: String(row.id),
    fires: row.fires as number,
    succeeded: row.succeeded as number,
    failed: row.failed as number,
    latenessP50Ms: numberOrNull(row.p50),
    latenessP99Ms: numberOrNull(row.p99),
    latenessMaxMs: numberOrNull(row.max),
  }));
}

function whereOf(filter: RunLogFilter): { where: string[]; parameters: unknown[] } {
  const where: string[] = [];
  const parameters: unknown[] = [];
  const add = (sql: (parameter: string) => string, value: unknown) => {
    parameters.push(value);
    where.push(sql(`$${parameters.length}`));
  };
  add((p) => `v.org_id = ${p}::uuid`, filter.orgId);
  if (filter.projectId !== undefined) add((p) => `v.project_id = ${p}::uuid`, filter.projectId);
  if (filter.status !== undefined) add((p) => `v.status = ${p}`, filter.status);
  if (filter.targetType !== undefined) add((p) => `v.target_type = ${p}`, filter.targetType);
  if (filter.mode !== undefined) add((p) => `v.mode = ${p}`, filter.mode);
  if (filter.triggerSource !== undefined) add((p) => `v.trigger_source = ${p}`, filter.triggerSource);
  if (filter.from !== undefined) add((p) => `v.created_at >= ${p}::timestamptz`, filter.from);
  if (filter.to !== undefined) add((p) => `v.created_at < ${p}::timestamptz`, filter.to);
  if (filter.q !== undefined) {
    // The candidates are found first (an init plan: the key index, and the id itself), then
    // fetched by primary key; the org_id condition above keeps other organizations' runs out.
    const ids = isUuid(filter.q) ? [filter.q.toLowerCase()] : [];
    parameters.push(filter.q, ids);
    where.push(`v.id = ANY(ARRAY(SELECT invocation_id FROM idempotency_keys WHERE key = $${parameters.length - 1}) || $${parameters.length}::uuid[])`);
  }
  return { where, parameters };
}

function logRowOf(row: Record<string, unknown>): RunLogRow {
  return {
    invocationId: row.invocation_id as string,
    projectId: row.project_id as string,
    status: row.status as string,
    mode: row.mode as string,
    targetType: row.target_type as string,
    triggerSource: row.trigger_source as string,
    createdAt: row.created_at as string,
    startedAt: (row.started_at as string | null) ?? null,
    completedAt: (row.completed_at as string | null) ?? null,
    durationMs: numberOrNull(row.duration_ms),
    errorMessage: (row.error_message as string | null) ?? null,
    scheduledFor: (row.scheduled_for as string | null) ?? null,
  };
}

/** bigint and numeric come back from pg as text. */
function numberOrNull(value: unknown): number | null {
  return value === null || value === undefined ? null : Number(value);
}
