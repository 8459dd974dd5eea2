// Dashboard benchmark (issue 17, Performance): the console's logs and invocation health on a
// read model of 1,000,000 runs over 90 days across 100 projects, generated in bulk in SQL.
// Each figure is measured through the functions the invocation service's query handlers call
// (services/invocation/src/queries/run-logs.repository.ts, from the build), against a bare
// primary-key lookup of invocation_views measured in the same run. Then the console itself in
// Chromium (support/console-browser-figures.ts): the health page ready with 10,000 runs in the
// project, and a logs filter change (next frame, filtered rows), against the goals the browser
// test held before it checked behaviour only.
//
//   npm run build && npm run bench:dashboard -- [--runs 1000000] [--samples 300] [--console off]
//
// bench/README.md "Dashboard" explains what is measured and the goals.
import { createHash } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import pg from 'pg';
import type * as Runtime from '@runline/runtime';
import { openBenchDatabase } from './support/bench-database.js';
import { chromiumAvailable, CONSOLE_GOALS, measureConsole } from './support/console-browser-figures.js';
import { formatUsage, parseArgsOrExplain, REPO_ROOT, UsageError } from './support/cli.js';
import { distributionOf, type Distribution } from './support/distribution.js';
import { printFigure } from './support/figures.js';
import { printTable } from './support/report.js';
import { hasBuild } from './support/servers.js';
import { runBench, type BenchSession } from './support/session.js';

const USAGE = `Usage: npm run bench:dashboard -- [options]
   or: node --import ./bench/register.mjs bench/dashboard.bench.ts [options]

${formatUsage([
  ['--runs <n>', 'runs generated (default 1000000)'],
  ['--projects <n>', 'projects they are spread over (default 100), in --orgs organizations'],
  ['--orgs <n>', 'organizations (default 10)'],
  ['--days <n>', 'days the runs are spread over, ending now (default 90)'],
  ['--samples <n>', 'measured calls per figure (default 300), after 10% as warm-up'],
  ['--dist <dir>', 'the build to measure (default dist/ of this repository)'],
  ['--console <on|off>', 'also time the console in Chromium (default on when /usr/bin/chromium or CHROMIUM_PATH exists)'],
  ['--console-runs <n>', 'runs in the console\'s project (default 10000)'],
  ['--console-samples <n>', 'page loads and filter changes timed (default 9)'],
])}

Database: a fresh database on BENCH_POSTGRES_ADMIN_URL (default postgres://postgres@127.0.0.1:5432/postgres),
dropped afterwards; or DATABASE_URL (must be empty: the invocation schema is created in it).`;

/** What the benchmark calls of services/invocation/src/queries/run-logs.repository.ts (loaded from the build). */
interface Queryable {
  query(sql: string, parameters?: unknown[]): Promise<unknown>;
}
interface RunLogPosition {
  createdAt: string;
  id: string;
}
interface RunLogsRepository {
  listRunLogs(db: Queryable, filter: { orgId: string; projectId?: string; status?: string }, limit: number, after: RunLogPosition | null): Promise<unknown>;
  runMetrics(db: Queryable, scope: { orgId: string; projectId?: string }, window: { from: Date; to: Date; bucket: 'hour' | 'day' }): Promise<unknown>;
}

/** p99 goals in milliseconds (issue 17). */
const GOALS: Record<string, number> = {
  'logs page of 50, projectId + status': 20,
  'logs page 1000 by cursor (organization)': 20,
  'metrics, one project, 30 days by day': 100,
  'metrics, one project, 24 h by hour': 50,
};
const DAY = 86_400_000;

interface Options {
  runs: number;
  projects: number;
  orgs: number;
  days: number;
  samples: number;
  dist: string;
  console: boolean;
  consoleRuns: number;
  consoleSamples: number;
}

async function main(session: BenchSession): Promise<number> {
  const options = parseOptions(process.argv.slice(2));
  if (!hasBuild(options.dist)) {
    console.error(`No build in ${options.dist}: run \`npm run build\` first.`);
    return 2;
  }
  const runtime = (await import(pathToFileURL(path.join(options.dist, 'node_modules', '@runline', 'runtime', 'index.js')).href)) as typeof Runtime;
  const { invocationService } = (await import(pathToFileURL(path.join(options.dist, 'node_modules', '@runline', 'invocation-service', 'index.js')).href)) as {
    invocationService: Runtime.ServiceDefinition;
  };
  const repository = (await import(pathToFileURL(path.join(options.dist, 'services', 'invocation', 'src', 'queries', 'run-logs.repository.js')).href)) as RunLogsRepository;

  console.log(`Dashboard benchmark: ${options.runs.toLocaleString('en')} runs over ${options.days} days, ${options.projects} projects in ${options.orgs} organizations`);
  console.log(`Node ${process.version}, ${os.cpus().length} CPUs (${os.cpus()[0]?.model.trim() ?? 'unknown'})`);
  const database = await openBenchDatabase(process.env);
  session.onCleanup('drop the database', () => database.drop());
  console.log(`Database: ${database.description}`);
  await runtime.migrateServices([invocationService], database.url);
  const pool = new pg.Pool({ connectionString: database.url, max: 1, idleTimeoutMillis: 0, options: '-c search_path=invocation' });
  session.onCleanup('close the pool', () => pool.end());
  const version = (await pool.query<{ server_version: string }>('SHOW server_version')).rows[0]?.server_version ?? 'unknown';
  console.log(`PostgreSQL ${version}`);

  const started = performance.now();
  await generate(pool, options);
  const generatedIn = (performance.now() - started) / 1000;
  const size = (await pool.query<{ table: string; indexes: string }>(
    `SELECT pg_size_pretty(pg_table_size('invocation_views')) AS table, pg_size_pretty(pg_indexes_size('invocation_views')) AS indexes`,
  )).rows[0]!;
  console.log(`Generated and analysed in ${generatedIn.toFixed(0)} s; invocation_views ${size.table} (with TOAST), indexes ${size.indexes}`);

  const db: Queryable = { query: async (sql, parameters) => (await pool.query(sql, parameters as unknown[])).rows };
  const orgIds = range(options.orgs).map((org) => uuidOf('org', org));
  const projects = range(options.projects).map((project) => ({ projectId: uuidOf('project', project), orgId: uuidOf('org', project % options.orgs) }));
  const ids = (await pool.query<{ id: string }>(`SELECT id FROM invocation_views TABLESAMPLE SYSTEM (1) LIMIT 2000`)).rows.map((row) => row.id);
  // The last row of page 999 of each organization, newest first: page 1000 starts after it.
  const deepCursors: Array<{ orgId: string; after: RunLogPosition }> = [];
  for (const orgId of orgIds) {
    const page999 = (await pool.query<{ position: string; id: string }>(
      `SELECT to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS position, id FROM invocation_views
        WHERE org_id = $1 ORDER BY created_at DESC, id DESC OFFSET ${999 * 50 - 1} LIMIT 1`,
      [orgId],
    )).rows[0];
    if (page999) deepCursors.push({ orgId, after: { createdAt: page999.position, id: page999.id } });
  }
  if (deepCursors.length === 0) throw new UsageError('too few runs per organization for a page 1000: raise --runs or lower --orgs');

  const statuses = ['SUCCEEDED', 'FAILED', 'TIMEOUT'];
  let turn = 0;
  const pick = <T>(list: T[]): T => list[turn++ % list.length]!;
  const now = Date.now();
  const figures: Array<[string, () => Promise<unknown>]> = [
    ['baseline: primary-key lookup', () => pool.query('SELECT document FROM invocation_views WHERE id = $1', [pick(ids)])],
    ['logs page of 50, projectId + status', () => {
      const project = pick(projects);
      return repository.listRunLogs(db, { ...project, status: statuses[turn % statuses.length] }, 50, null);
    }],
    ['logs page of 50, organization, no filter', () => repository.listRunLogs(db, { orgId: pick(orgIds) }, 50, null)],
    ['logs page 1000 by cursor (organization)', () => {
      const deep = pick(deepCursors);
      return repository.listRunLogs(db, { orgId: deep.orgId }, 50, deep.after);
    }],
    ['metrics, one project, 30 days by day', () => repository.runMetrics(db, pick(projects), { from: new Date(now - 30 * DAY), to: new Date(now), bucket: 'day' })],
    ['metrics, one project, 24 h by hour', () => repository.runMetrics(db, pick(projects), { from: new Date(now - DAY), to: new Date(now), bucket: 'hour' })],
    ['metrics, organization, 24 h by hour', () => repository.runMetrics(db, { orgId: pick(orgIds) }, { from: new Date(now - DAY), to: new Date(now), bucket: 'hour' })],
    ['metrics, organization, 30 days by day', () => repository.runMetrics(db, { orgId: pick(orgIds) }, { from: new Date(now - 30 * DAY), to: new Date(now), bucket: 'day' })],
    // The write side, last (it changes rows): a transition's UPDATE of the read model, which
    // the generated columns and the project-status index make dearer. Information, no goal.
    ['write: transition changing status', () =>
      pool.query(`UPDATE invocation_views SET document = jsonb_set(document, '{status}', to_jsonb(CASE WHEN status = 'FAILED' THEN 'SUCCEEDED' ELSE 'FAILED' END)),
                         sequence = sequence + 1, updated_at = now() WHERE id = $1`, [pick(ids)])],
    ['write: same status (callback attempt)', () =>
      pool.query(`UPDATE invocation_views SET document = jsonb_set(document, '{updatedAt}', to_jsonb(now()::text)), updated_at = now() WHERE id = $1`, [pick(ids)])],
  ];

  const results: Array<{ name: string; distribution: Distribution }> = [];
  for (const [name, call] of figures) {
    const samples = name.startsWith('metrics, organization, 30') ? Math.max(20, Math.round(options.samples / 5)) : options.samples;
    results.push({ name, distribution: await measure(call, samples) });
    const last = results[results.length - 1]!.distribution;
    console.log(`  ${name}: p50 ${last.p50.toFixed(2)} ms, p99 ${last.p99.toFixed(2)} ms (${last.count} calls)`);
  }

  const baseline = results[0]!.distribution;
  console.log();
  printTable([
    ['figure', 'p50 ms', 'p99 ms', 'p50 / baseline', 'p99 / baseline', 'goal p99', ''],
    ...results.map(({ name, distribution }) => {
      const goal = GOALS[name];
      return [
        name,
        distribution.p50.toFixed(2),
        distribution.p99.toFixed(2),
        `${(distribution.p50 / baseline.p50).toFixed(1)}x`,
        `${(distribution.p99 / baseline.p99).toFixed(1)}x`,
        goal === undefined ? '' : `<= ${goal}`,
        goal === undefined ? '' : distribution.p99 <= goal ? 'MET' : 'NOT MET',
      ];
    }),
  ]);
  for (const { name, distribution } of results) {
    const goal = GOALS[name];
    if (goal !== undefined) {
      printFigure({ benchmark: 'dashboard', figure: `${name}, p99 ms (baseline: primary-key lookup)`, value: Number(distribution.p99.toFixed(2)), baseline: Number(baseline.p99.toFixed(2)), goal: `<= ${goal}`, met: distribution.p99 <= goal });
    }
  }
  const plans = await explain(pool, deepCursors[0]!, projects[0]!);
  console.log(`\nPlans (EXPLAIN ANALYZE, one call each):\n${plans}`);
  if (options.console) await reportConsole(session, options);
  else console.log('\nConsole in Chromium: skipped (--console off, or no Chromium)');
  await session.finish({ clean: true, keepWork: false });
  return 0;
}

/** The console in Chromium, on a system of its own (support/console-browser-figures.ts). */
async function reportConsole(session: BenchSession, options: Options): Promise<void> {
  console.log(`\nConsole in Chromium: ${options.consoleRuns.toLocaleString('en')} runs in the project, ${options.consoleSamples} samples each`);
  const figures = await measureConsole(session, { dist: options.dist, runs: options.consoleRuns, samples: options.consoleSamples });
  const row = (name: string, distribution: Distribution, goal: number) => [
    name,
    distribution.min.toFixed(0),
    distribution.p50.toFixed(0),
    distribution.max.toFixed(0),
    `<= ${goal}`,
    distribution.p50 <= goal ? 'MET' : 'NOT MET',
  ];
  printTable([
    ['figure (ms)', 'min', 'p50', 'max', 'goal (p50)', ''],
    row('health page ready (navigation start to figures)', figures.healthReady, CONSOLE_GOALS.healthReady),
    row('logs, 200 rows: filter change to next frame', figures.filterFrame, CONSOLE_GOALS.filterFrame),
    row('logs, 200 rows: filter change to filtered rows', figures.filterRows, CONSOLE_GOALS.filterRows),
  ]);
}

/**
 * Runs in chunks of 100,000: one INSERT … SELECT generate_series each, documents shaped like
 * the projector's (invocation.projector.ts), then VACUUM ANALYZE as after a day of autovacuum.
 * Mix: 80% SUCCEEDED, 9% FAILED, 2% TIMEOUT, 2% CANCELLED, 3% SCHEDULED, 1% each QUEUED,
 * RUNNING and SUSPENDED; 60% ASYNC; FLOW 50%, AUTOMATION 30%, BOT 20%; WEBHOOK 70%, POLLING
 * 15%, SCHEDULE 10%, REPLAY 5%; durations skewed (most under a second, a few up to 60 s); a
 * callback on 30% of finished async runs, a few failed.
 */
async function generate(pool: pg.Pool, options: Options): Promise<void> {
  const chunk = 100_000;
  // Session helpers (the pool has one connection): ISO 8601 as the projector writes it, and
  // one callbackAttempts entry (invocation.projector.ts CallbackAttemptEntry).
  await pool.query(`CREATE FUNCTION pg_temp.iso(timestamptz) RETURNS text IMMUTABLE LANGUAGE sql
                      AS $$ SELECT to_char($1 AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') $$`);
  await pool.query(`CREATE FUNCTION pg_temp.attempt(int, text, int, boolean, timestamptz) RETURNS jsonb IMMUTABLE LANGUAGE sql
                      AS $$ SELECT jsonb_build_object('webhookId', 'msg_bench', 'attempt', $1, 'attemptedAt', pg_temp.iso($5), 'durationMs', 40,
                                                     'outcome', $2, 'statusCode', $3, 'error', CASE WHEN $2 <> 'ACKNOWLEDGED' THEN 'the receiver answered 500' END,
                                                     'final', $4) $$`);
  for (let first = 1; first <= options.runs; first += chunk) {
    const last = Math.min(options.runs, first + chunk - 1);
    await pool.query(
      `INSERT INTO invocation_views (id, org_id, project_id, started_by_token_id, target_type, document, sequence, created_at, updated_at)
       SELECT id, md5('org-' || (p % $4))::uuid, md5('project-' || p)::uuid, NULL, target_type,
              jsonb_build_object(
                'invocationId', id, 'status', status, 'environment', 'PRODUCTION', 'triggerSource', trigger_source, 'mode', mode,
                'targetType', target_type, 'startedAt', pg_temp.iso(started_at), 'completedAt', pg_temp.iso(completed_at),
                'durationMs', CASE WHEN finished AND status <> 'CANCELLED' THEN duration_ms END,
                'errorMessage', CASE status WHEN 'FAILED' THEN 'Payload is missing required keys: orderId' WHEN 'TIMEOUT' THEN 'Run exceeded its time limit of 60 s' END,
                'requestPayload', jsonb_build_object('event', 'order.created', 'customerId', 'c-' || (n % 5000), 'orderId', n::text, 'amount', n % 1000, 'webhookSecret', '[REDACTED]'),
                'result', CASE WHEN status = 'SUCCEEDED' THEN jsonb_build_object('messages', jsonb_build_array('Order ' || n), 'actions', '[]'::jsonb) END,
                'trace', jsonb_build_object('runtime', 'engine-v1', 'nodes', 2),
                'steps', jsonb_build_array(jsonb_build_object('nodeId', 'n1', 'type', 'message', 'status', 'OK', 'durationMs', 1),
                                           jsonb_build_object('nodeId', 'n2', 'type', 'end', 'status', 'OK', 'durationMs', 0)),
                'callbackAttempts', CASE WHEN finished AND mode = 'ASYNC' AND r5 < 0.3 THEN
                    CASE WHEN r5 < 0.02 THEN jsonb_build_array(pg_temp.attempt(1, 'HTTP_ERROR', 500, false, completed_at), pg_temp.attempt(2, 'HTTP_ERROR', 500, false, completed_at), pg_temp.attempt(3, 'TIMEOUT', NULL, true, completed_at))
                         ELSE jsonb_build_array(pg_temp.attempt(1, 'ACKNOWLEDGED', 200, true, completed_at)) END
                  ELSE '[]'::jsonb END,
                'scheduledFor', CASE WHEN status = 'SCHEDULED' THEN pg_temp.iso(created_at + interval '1 day') END,
                'schedulerStatus', NULL, 'schedulerJobName', NULL, 'pendingApproval', NULL,
                'enrollmentPolicy', 'EVERY_MATCH', 'onErrorPolicy', 'ABORT', 'attempts', 1, 'maxAttempts', 1,
                'createdAt', pg_temp.iso(created_at), 'updatedAt', pg_temp.iso(coalesce(completed_at, created_at))),
              3, created_at, coalesce(completed_at, created_at)
         FROM (
           SELECT n, p, id, created_at, target_type, mode, trigger_source, status, r5, duration_ms,
                  status IN ('SUCCEEDED', 'FAILED', 'TIMEOUT', 'CANCELLED') AS finished,
                  CASE WHEN status NOT IN ('SCHEDULED', 'QUEUED', 'CANCELLED') THEN created_at + interval '5 ms' END AS started_at,
                  CASE WHEN status IN ('SUCCEEDED', 'FAILED', 'TIMEOUT', 'CANCELLED') THEN created_at + (duration_ms + 5) * interval '1 ms' END AS completed_at
             FROM (
               SELECT n, n % $3 AS p, gen_random_uuid() AS id,
                      now() - r0 * $5 * interval '1 day' AS created_at,
                      CASE WHEN r2 < 0.5 THEN 'FLOW' WHEN r2 < 0.8 THEN 'AUTOMATION' ELSE 'BOT' END AS target_type,
                      CASE WHEN r3 < 0.6 THEN 'ASYNC' ELSE 'SYNC' END AS mode,
                      CASE WHEN r4 < 0.7 THEN 'WEBHOOK' WHEN r4 < 0.85 THEN 'POLLING' WHEN r4 < 0.95 THEN 'SCHEDULE' ELSE 'REPLAY' END AS trigger_source,
                      CASE WHEN r1 < 0.80 THEN 'SUCCEEDED' WHEN r1 < 0.89 THEN 'FAILED' WHEN r1 < 0.91 THEN 'TIMEOUT' WHEN r1 < 0.93 THEN 'CANCELLED'
                           WHEN r1 < 0.96 THEN 'SCHEDULED' WHEN r1 < 0.97 THEN 'QUEUED' WHEN r1 < 0.98 THEN 'RUNNING' ELSE 'SUSPENDED' END AS status,
                      r5, (power(r6, 4) * 60000)::int AS duration_ms
                 FROM (
                   -- Volatile columns of their own subquery: one draw per row (never pulled up).
                   SELECT n, random() AS r0, random() AS r1, random() AS r2, random() AS r3, random() AS r4, random() AS r5, random() AS r6
                     FROM generate_series($1::int, $2::int) AS n
                 ) draws
             ) raw
         ) s`,
      [first, last, options.projects, options.orgs, options.days],
    );
    process.stdout.write(`\r  generated ${last.toLocaleString('en')} runs`);
  }
  process.stdout.write('\n');
  await pool.query('VACUUM ANALYZE invocation_views');
}

async function measure(call: () => Promise<unknown>, samples: number): Promise<Distribution> {
  for (let i = 0; i < Math.ceil(samples / 10); i += 1) await call();
  const times: number[] = [];
  for (let i = 0; i < samples; i += 1) {
    const start = performance.now();
    await call();
    times.push(performance.now() - start);
  }
  return distributionOf(times);
}

/** The plans behind the figures, so a regression shows where it comes from. */
async function explain(pool: pg.Pool, deep: { orgId: string; after: RunLogPosition }, project: { orgId: string; projectId: string }): Promise<string> {
  const plan = async (sql: string, parameters: unknown[]) =>
    (await pool.query<{ 'QUERY PLAN': string }>(`EXPLAIN (ANALYZE, BUFFERS, TIMING OFF, SUMMARY ON) ${sql}`, parameters)).rows.map((row) => `    ${row['QUERY PLAN']}`).join('\n');
  const page = await plan(
    `SELECT id FROM invocation_views v WHERE v.org_id = $1 AND (v.created_at, v.id) < ($2::timestamptz, $3::uuid) ORDER BY v.created_at DESC, v.id DESC LIMIT 51`,
    [deep.orgId, deep.after.createdAt, deep.after.id],
  );
  const filtered = await plan(
    `SELECT id FROM invocation_views v WHERE v.org_id = $1 AND v.project_id = $2 AND v.status = 'TIMEOUT' ORDER BY v.created_at DESC, v.id DESC LIMIT 51`,
    [project.orgId, project.projectId],
  );
  return `  logs page 1000 by cursor:\n${page}\n  logs, projectId + status TIMEOUT (the rarest status filtered here):\n${filtered}`;
}

/** md5('<kind>-<index>')::uuid, as the generator writes it. */
function uuidOf(kind: 'org' | 'project', index: number): string {
  const hex = createHash('md5').update(`${kind}-${index}`).digest('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

function range(count: number): number[] {
  return Array.from({ length: count }, (_value, index) => index);
}

function parseOptions(argv: string[]): Options {
  const { values } = parseArgsOrExplain({
    args: argv,
    options: {
      runs: { type: 'string', default: '1000000' },
      projects: { type: 'string', default: '100' },
      orgs: { type: 'string', default: '10' },
      days: { type: 'string', default: '90' },
      samples: { type: 'string', default: '300' },
      dist: { type: 'string', default: path.join(REPO_ROOT, 'dist') },
      console: { type: 'string', default: chromiumAvailable() ? 'on' : 'off' },
      'console-runs': { type: 'string', default: '10000' },
      'console-samples': { type: 'string', default: '9' },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) {
    console.log(USAGE);
    process.exit(0);
  }
  const onOff = (name: string, value: string | boolean | undefined): boolean => {
    if (value !== 'on' && value !== 'off') throw new UsageError(`--${name} must be on or off`);
    return value === 'on';
  };
  const positive = (name: string, value: string | boolean | undefined): number => {
    const number = Number(value);
    if (!Number.isInteger(number) || number < 1) throw new UsageError(`--${name} must be a positive integer`);
    return number;
  };
  return {
    runs: positive('runs', values.runs),
    projects: positive('projects', values.projects),
    orgs: positive('orgs', values.orgs),
    days: positive('days', values.days),
    samples: positive('samples', values.samples),
    dist: String(values.dist),
    console: onOff('console', values.console),
    consoleRuns: positive('console-runs', values['console-runs']),
    consoleSamples: positive('console-samples', values['console-samples']),
  };
}

await runBench(USAGE, main);
