// Schedule triggers benchmark (issue 31): many published schedules, a few hundred fires a
// second, and how late each fire's run starts, against a bare setTimeout in the same run.
// Gateway + invocation service in one child process, the scheduler service in another (as
// deployed), on NATS JetStream and a fresh PostgreSQL database, from the compiled build.
//   Publish: every project's definition with its schedules, through the console API, 8 at a time;
//     the latency of POST …/publish (the scheduler stores the schedules before the 200, DESIGN
//     section 8), against publishes of the same automation without schedules. Then, during the
//     window, one publish at a time (with 20 schedules and without, alternately) while the
//     100,000 schedules fire: the goal's figure, p99 <= 100 ms.
//   Lateness: startedAt − scheduledFor of every fire of the `every` schedules due in a measured
//     window (no jitter), from the read model. Goal: p99 <= 10 ms, max <= 50 ms. Baseline: a
//     bare setTimeout scheduler in its own process, firing the same times, with as many
//     timers armed as schedules wait.
//   Also: missed, doubled and unexpected fires in the window (every schedule's fire times in it,
//     cron ones too, computed with the engine's own fireTimesBetween), the scheduler's peak RSS
//     (goal <= 250 MB).
//   Takeover: with --replicas 2 --kill-at <s>, one scheduler replica is killed (SIGKILL) that far
//     into the window; the fires due in the 5 s after it are reported apart from the rest.
//
//   npm run build && npm run bench:schedules -- [--projects 5000] [--per-project 20] [--fast 1000] ...
//
// A project holds at most 20 schedules (DESIGN section 12), so 100,000 schedules take 5,000
// projects. bench/README.md explains what is measured and how.
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { fireTimesBetween, type ScheduleDefinition } from '@runline/engine';
import { openBenchDatabase } from './support/bench-database.js';
import { consoleApi, type ConsoleApiCall } from './support/console-api.js';
import { logTail } from './support/child-server.js';
import { COMMON_OPTION_SPECS, formatUsage, parseArgsOrExplain, positiveInteger } from './support/cli.js';
import { distributionOf, type Distribution } from './support/distribution.js';
import { printFigure } from './support/figures.js';
import { indent, printTable } from './support/report.js';
import { megabytes, RssSampler } from './support/rss-sampler.js';
import { hasBuild, startScheduler, startSystem } from './support/servers.js';
import { runBench, type BenchSession } from './support/session.js';
import { startTimerBaseline } from './support/timer-baseline.js';

const GOALS = { lateP99: 10, lateMax: 50, publishP99: 100, rssMb: 250 };
/** Time zones the cron schedules are spread over (both hemispheres, with and without daylight saving). */
const ZONES = ['UTC', 'Europe/Berlin', 'America/New_York', 'Asia/Tokyo', 'Australia/Sydney', 'America/Sao_Paulo', 'Asia/Kolkata'];

const USAGE = `Usage: npm run bench:schedules -- [options]

Publishes --projects automations with --per-project schedules each through the console API
(--fast of them \`every: "<--every>s"\`, the rest hourly or daily crons in several time zones),
then reads how late each fire of the fast schedules in a measured window started
(startedAt - scheduledFor) from the read model. Needs a build (npm run build), PostgreSQL and
NATS with JetStream (NATS_URL, default nats://127.0.0.1:4222).

Options:
${formatUsage([
  ['--projects <n>', 'automation projects (default 5000)'],
  ['--per-project <n>', 'schedules per project, at most 20 (default 20)'],
  ['--fast <n>', 'schedules that fire every --every seconds (default 1000: 200 fires/s at 5 s)'],
  ['--every <s>', 'the fast schedules’ interval in seconds (default 5)'],
  ['--window <s>', 'seconds of the measured window (default 30)'],
  ['--connections <n>', 'publishes in flight (default 8)'],
  ['--baseline-publishes <n>', 'publishes without schedules, the publish baseline (default 200)'],
  ['--window-publishes <n>', 'publishes during the window, one at a time, half with schedules (default 100)'],
  ['--grace <s>', 'seconds after the window within which every fire must have started (default 5)'],
  ['--replicas <n>', 'scheduler replicas, each its own process (default 1)'],
  ['--kill-at <s>', 'kill -9 one replica this many seconds into the window (needs --replicas 2 or more)'],
  ['--dist <dir>', 'the build to run (default dist/ of this repository)'],
])}`;

interface Options {
  projects: number;
  perProject: number;
  fast: number;
  everySeconds: number;
  windowSeconds: number;
  connections: number;
  windowPublishes: number;
  baselinePublishes: number;
  graceSeconds: number;
  replicas: number;
  killAtSeconds: number | null;
  dist: string;
}

/** The fires due this long after a replica is killed are the takeover's, reported apart. */
const TAKEOVER_REPORT_MS = 5_000;

async function main(session: BenchSession): Promise<number> {
  const options = parseOptions(process.argv.slice(2));
  if (!hasBuild(options.dist)) {
    console.error(`No build in ${options.dist}: run \`npm run build\` first.`);
    return 2;
  }
  const total = options.projects * options.perProject;
  console.log(
    `Schedules benchmark: ${total} schedules over ${options.projects} projects (${options.fast} every ${options.everySeconds} s, ` +
      `${Math.round(options.fast / options.everySeconds)} fires/s; the rest hourly or daily crons), ${options.windowSeconds} s window`,
  );
  console.log(`Node ${process.version}, ${os.cpus().length} CPUs (${os.cpus()[0]?.model.trim() ?? 'unknown'}); logs in ${session.workDir}`);

  const database = await openBenchDatabase(process.env);
  session.onCleanup('drop the database', () => database.drop());
  const system = await startSystem(session, { bus: 'nats', profile: false, dist: options.dist, databaseUrl: database.url });
  const schedulers = [];
  for (let replica = 1; replica <= options.replicas; replica++) schedulers.push(await startScheduler(session, system, options.dist, options.replicas === 1 ? 'scheduler' : `scheduler-${replica}`));
  const scheduler = schedulers[schedulers.length - 1]!;
  const baseline = await startTimerBaseline(session);
  const rss = new RssSampler(schedulers.map((replica, index) => ({ name: `scheduler-${index + 1}`, pid: replica.pid }))).start();
  session.onCleanup('stop the RSS sampler', async () => rss.stop());
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  session.onCleanup('close the reader', () => client.end());

  // The publish of 5,000 projects and the window can take most of an hour.
  const api = consoleApi(system.server.url, system.consoleJwtSecret, 7200);
  const orgId = String((await api('POST', '/v1/orgs', { name: 'Schedules benchmark' }, 201)).orgId);

  console.log(`\nPublish: ${options.baselinePublishes} automations without schedules (baseline), then ${options.projects} with ${options.perProject} schedules each`);
  const plain = await publishAll(api, orgId, options.baselinePublishes, options.connections, () => []);
  let fastLeft = options.fast;
  const withSchedules = await publishAll(api, orgId, options.projects, options.connections, (index) => {
    const fast = Math.min(fastLeft, Math.ceil(options.fast / options.projects));
    fastLeft -= fast;
    return schedulesOf(index, options.perProject, fast, options.everySeconds);
  });
  printTable([
    ['publish', 'count', 'min ms', 'p50 ms', 'p90 ms', 'p99 ms', 'max ms'],
    distributionRow('without schedules (baseline)', distributionOf(plain)),
    distributionRow(`with ${options.perProject} schedules`, distributionOf(withSchedules)),
  ]);
  const stored = Number((await client.query<{ n: number }>('SELECT count(*)::int AS n FROM scheduler.schedules')).rows[0]?.n ?? 0);
  console.log(`  the scheduler holds ${stored} schedules (expected ${total})`);

  // The window begins once publishing has settled; its dues are the fast schedules' fire times in it.
  const windowStart = Math.ceil((Date.now() + 5000) / 1000) * 1000;
  const windowEnd = windowStart + options.windowSeconds * 1000;
  const fastRows = await client.query<{ anchor_ms: string; every: string }>(
    `SELECT (extract(epoch FROM anchor_at) * 1000)::bigint AS anchor_ms, definition->>'every' AS every FROM scheduler.schedules WHERE definition->>'every' IS NOT NULL`,
  );
  const windowDues = fastRows.rows.flatMap((row) => fireTimesIn(Number(row.anchor_ms), Number.parseInt(row.every, 10) * 1000, windowStart, windowEnd)).sort((a, b) => a - b);
  const farRows = await client.query<{ due_ms: string }>(`SELECT (extract(epoch FROM due_at) * 1000)::bigint AS due_ms FROM scheduler.schedules WHERE definition->>'every' IS NULL AND due_at IS NOT NULL`);
  const farDues = farRows.rows.map((row) => Number(row.due_ms)).filter((due) => due > windowEnd + options.graceSeconds * 1000 + 60_000);
  const firing = baseline.arm(windowDues, farDues, windowEnd - Date.now() + options.graceSeconds * 1000 + 30_000).catch((error: unknown) => error as Error);

  console.log(`\nWindow: ${windowDues.length} fires due from ${new Date(windowStart).toISOString()} over ${options.windowSeconds} s; grace ${options.graceSeconds} s`);
  const windowFrom = performance.now() + Math.max(0, windowStart - Date.now());
  const killedAt = options.killAtSeconds === null ? null : windowStart + options.killAtSeconds * 1000;
  const steadyPublishes = publishOneAtATime(api, orgId, windowStart, windowEnd, options.windowPublishes, (index) => schedulesOf(options.projects + index, options.perProject, 0, options.everySeconds));
  if (killedAt !== null) {
    await sleep(Math.max(0, killedAt - Date.now()));
    process.kill(schedulers[0]!.pid, 'SIGKILL');
    console.log(`  killed scheduler-1 (SIGKILL) at ${new Date(killedAt).toISOString()}`);
  }
  await sleep(Math.max(0, windowEnd + options.graceSeconds * 1000 - Date.now()));
  const peakRss = Math.max(...rss.peaks(windowFrom).filter(Number.isFinite));
  const overallRss = Math.max(...rss.peaks().filter(Number.isFinite));

  const runs = await client.query<{ project_id: string; job: string; scheduled_for: string; started_at: string | null; n: number }>(
    `SELECT project_id, document->>'schedulerJobName' AS job, document->>'scheduledFor' AS scheduled_for,
            min(document->>'startedAt') AS started_at, count(*)::int AS n
       FROM invocation.invocation_views
      WHERE document->>'triggerSource' = 'SCHEDULE' AND document->>'scheduledFor' >= $1 AND document->>'scheduledFor' < $2
      GROUP BY 1, 2, 3`,
    [new Date(windowStart).toISOString(), new Date(windowEnd).toISOString()],
  );
  const doubled = runs.rows.filter((row) => row.n > 1).length;
  const inKillWindow = (at: number) => killedAt !== null && at >= killedAt && at < killedAt + TAKEOVER_REPORT_MS;
  const inTakeover = (row: { scheduled_for: string }) => inKillWindow(Date.parse(row.scheduled_for));
  const latenessOf = (row: { scheduled_for: string; started_at: string | null }) => (row.started_at === null ? Number.NaN : Date.parse(row.started_at) - Date.parse(row.scheduled_for));
  const lateness = runs.rows.filter((row) => !inTakeover(row)).map(latenessOf);
  const takeoverLateness = runs.rows.filter(inTakeover).map(latenessOf);
  const expected = await expectedFires(client, windowStart, windowEnd);
  const runKey = (row: { project_id: string; job: string; scheduled_for: string }) => `${row.project_id}|${row.job}|${Date.parse(row.scheduled_for)}`;
  const seen = new Set(runs.rows.map(runKey));
  const missed = [...expected].filter((key) => !seen.has(key)).length;
  const unexpected = runs.rows.filter((row) => !expected.has(runKey(row))).length;
  const steady = await steadyPublishes;
  const steadyWith = steady.filter((publish) => publish.withSchedules && !inKillWindow(publish.at)).map((publish) => publish.ms);
  const steadyWithout = steady.filter((publish) => !publish.withSchedules && !inKillWindow(publish.at)).map((publish) => publish.ms);
  const fired = await firing;
  const fires = distributionOf(lateness);
  const timer = fired instanceof Error ? distributionOf([]) : distributionOf(fired);

  console.log('\nLateness of the fires due in the window (ms; startedAt - scheduledFor, no jitter):');
  printTable([
    ['', 'count', 'min', 'p50', 'p90', 'p99', 'max'],
    distributionRow(killedAt === null ? 'system' : 'system, outside the takeover', fires),
    ...(killedAt === null ? [] : [distributionRow(`system, due within ${TAKEOVER_REPORT_MS / 1000} s after the kill`, distributionOf(takeoverLateness))]),
    distributionRow('baseline: setTimeout fired - due', timer),
  ]);
  const notStarted = [...lateness, ...takeoverLateness].filter((value) => !Number.isFinite(value)).length;
  console.log(`  fires due in the window: ${expected.size} (${windowDues.length} of the every-${options.everySeconds}-s schedules, the rest crons)`);
  console.log(`  missed: ${missed}; doubled: ${doubled}; not due but started: ${unexpected}; not started: ${notStarted}`);
  console.log(`\nPublishes during the window, one at a time while the schedules fire (ms${killedAt === null ? '' : `; those in the ${TAKEOVER_REPORT_MS / 1000} s after the kill left out`}):`);
  printTable([
    ['publish', 'count', 'min ms', 'p50 ms', 'p90 ms', 'p99 ms', 'max ms'],
    distributionRow('without schedules (baseline)', distributionOf(steadyWithout)),
    distributionRow(`with ${options.perProject} schedules`, distributionOf(steadyWith)),
  ]);
  console.log(`  the scheduler's own view (due -> start request sent, whole run, histogram buckets${options.replicas > 1 ? ', the last replica' : ''}): ${await schedulerLateness(scheduler.url)}`);
  console.log(`  scheduler RSS (the largest replica): peak ${megabytes(peakRss)} MB in the window, ${megabytes(overallRss)} MB over the whole run`);

  const publishP99 = distributionOf(steadyWith).p99;
  console.log('\nGoals:');
  console.log(`  fire lateness p99 ${fires.p99} ms (goal <= ${GOALS.lateP99}; setTimeout ${timer.p99}): ${fires.p99 <= GOALS.lateP99 ? 'PASS' : 'MISS'}`);
  console.log(`  fire lateness max ${fires.max} ms (goal <= ${GOALS.lateMax}; setTimeout ${timer.max}): ${fires.max <= GOALS.lateMax ? 'PASS' : 'MISS'}`);
  console.log(
    `  publish of ${options.perProject} schedules p99 ${publishP99.toFixed(0)} ms, one at a time during the window (goal <= ${GOALS.publishP99}; 8 at a time while publishing all: ${distributionOf(withSchedules).p99.toFixed(0)}): ${publishP99 <= GOALS.publishP99 ? 'PASS' : 'MISS'}`,
  );
  console.log(`  scheduler RSS ${megabytes(overallRss)} MB (goal <= ${GOALS.rssMb} MB): ${overallRss <= GOALS.rssMb * 1024 * 1024 ? 'PASS' : 'MISS'}`);
  console.log(`  missed 0, doubled 0, none unexpected: ${missed === 0 && doubled === 0 && unexpected === 0 ? 'PASS' : 'MISS'}`);
  printFigure({ benchmark: 'schedules', figure: 'fire lateness p99, ms (baseline: setTimeout)', value: fires.p99, baseline: timer.p99, goal: `<= ${GOALS.lateP99}`, met: fires.p99 <= GOALS.lateP99 });
  printFigure({ benchmark: 'schedules', figure: 'scheduler RSS, MB', value: Number(megabytes(overallRss)), goal: `<= ${GOALS.rssMb}`, met: overallRss <= GOALS.rssMb * 1024 * 1024 });

  const invalid = stored !== total ? `the scheduler holds ${stored} schedules, not ${total}` : fired instanceof Error ? `the setTimeout baseline failed: ${fired.message}` : undefined;
  if (invalid !== undefined) {
    console.log(`\nINVALID: ${invalid}`);
    console.log(`system log (end):\n${indent(logTail(system.server.logFile))}`);
    console.log(`scheduler log (end):\n${indent(logTail(scheduler.logFile))}`);
  }
  await session.finish({ clean: invalid === undefined, keepWork: false });
  return invalid === undefined ? 0 : 1;
}

/** Creates `count` automations with the schedules `schedulesFor(i)` gives, `connections` at a time; returns each publish's latency (ms). */
async function publishAll(api: ConsoleApiCall, orgId: string, count: number, connections: number, schedulesFor: (index: number) => object[]): Promise<number[]> {
  const latencies: number[] = [];
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const index = next++;
      const project = String((await api('POST', `/v1/orgs/${orgId}/projects`, { name: `Schedules ${index}`, type: 'AUTOMATION' }, 201)).projectId);
      const base = `/v1/orgs/${orgId}/projects/${project}`;
      await api('PUT', `${base}/definition`, { definition: automation(schedulesFor(index)) }, 200);
      const started = performance.now();
      await api('POST', `${base}/publish`, undefined, 200);
      latencies.push(performance.now() - started);
    }
  };
  await Promise.all(Array.from({ length: connections }, worker));
  return latencies;
}

/**
 * `count` publishes spread evenly over [from, to), one at a time, alternately with the schedules
 * `schedulesFor(i)` gives and without any: what a publish takes while the schedules fire.
 */
async function publishOneAtATime(
  api: ConsoleApiCall,
  orgId: string,
  from: number,
  to: number,
  count: number,
  schedulesFor: (index: number) => object[],
): Promise<Array<{ at: number; ms: number; withSchedules: boolean }>> {
  const published = [];
  for (let index = 0; index < count; index++) {
    await sleep(Math.max(0, from + ((index + 0.5) * (to - from)) / count - Date.now()));
    const withSchedules = index % 2 === 0;
    const at = Date.now();
    const [ms] = await publishAll(api, orgId, 1, 1, () => (withSchedules ? schedulesFor(index) : []));
    published.push({ at, ms: ms!, withSchedules });
  }
  return published;
}

/**
 * The key (`project|schedule:<id>|nominal ms`) of every fire due in [from, to) of every schedule,
 * counted from when it was created: the engine's own fire times, crons and intervals alike.
 */
async function expectedFires(client: pg.Client, from: number, to: number): Promise<Set<string>> {
  const { rows } = await client.query<{ project_id: string; schedule_id: string; definition: ScheduleDefinition; anchor_at: Date; created_at: Date }>(
    'SELECT project_id, schedule_id, definition, anchor_at, created_at FROM scheduler.schedules',
  );
  const keys = new Set<string>();
  for (const row of rows) {
    const since = new Date(Math.max(from, row.created_at.getTime()));
    for (const time of fireTimesBetween(row.definition, since, new Date(to), row.anchor_at, 100_000)) keys.add(`${row.project_id}|schedule:${row.schedule_id}|${time.getTime()}`);
  }
  return keys;
}

/** The least a run can do (one `return` node), with `schedules`. */
function automation(schedules: object[]): object {
  return {
    schemaVersion: 1,
    workflow: {
      trigger: { externalEnabled: true, key: 'external_event' },
      start: 'done',
      nodes: { done: { type: 'return', value: "{ 'n': payload.n }" } },
      ...(schedules.length > 0 ? { schedules } : {}),
    },
  };
}

/** Project `index`'s schedules: `fast` every-`everySeconds` ones (ALLOW: a run never holds the next back), the rest hourly or daily crons. */
function schedulesOf(index: number, count: number, fast: number, everySeconds: number): object[] {
  return Array.from({ length: count }, (_, i) => {
    if (i < fast) return { id: `fast-${i}`, every: `${everySeconds}s`, overlap: 'ALLOW', payload: { n: i } };
    const minute = (index * 7 + i * 13) % 60;
    const zone = ZONES[(index + i) % ZONES.length]!;
    return i % 3 === 0 ? { id: `daily-${i}`, cron: `${minute} ${(index + i) % 24} * * *`, timezone: zone } : { id: `hourly-${i}`, cron: `${minute} * * * *`, timezone: zone };
  });
}

/**
 * p50 / p99 / max bucket bounds of the scheduler's `runline_scheduler_schedule_fire_lateness_seconds`
 * (due time to the moment the start request left): how much of the lateness is the scheduler's.
 */
async function schedulerLateness(schedulerUrl: string): Promise<string> {
  const text = await (await fetch(`${schedulerUrl}/metrics`)).text();
  const buckets = [...text.matchAll(/^runline_scheduler_schedule_fire_lateness_seconds_bucket\{[^}]*le="([^"]+)"[^}]*\} (\d+)/gm)].map((match) => ({
    le: match[1] === '+Inf' ? Number.POSITIVE_INFINITY : Number(match[1]) * 1000,
    count: Number(match[2]),
  }));
  const total = buckets[buckets.length - 1]?.count ?? 0;
  if (total === 0) return 'no fires recorded';
  const bound = (fraction: number) => buckets.find((bucket) => bucket.count >= fraction * total)?.le ?? Number.NaN;
  const label = (value: number) => (Number.isFinite(value) ? `<= ${value} ms` : '> 60 s');
  return `${total} fires; p50 ${label(bound(0.5))}, p99 ${label(bound(0.99))}, max ${label(bound(1))}`;
}

/** anchor + k × interval (k >= 1) in [from, to). */
function fireTimesIn(anchor: number, interval: number, from: number, to: number): number[] {
  const times: number[] = [];
  for (let k = Math.max(1, Math.ceil((from - anchor) / interval)); anchor + k * interval < to; k += 1) times.push(anchor + k * interval);
  return times;
}

function distributionRow(label: string, d: Distribution): string[] {
  const whole = (value: number) => (Number.isFinite(value) ? value.toFixed(0) : '-');
  return [label, String(d.count), whole(d.min), whole(d.p50), whole(d.p90), whole(d.p99), whole(d.max)];
}

function parseOptions(argv: string[]): Options {
  const { values } = parseArgsOrExplain({
    args: argv,
    options: {
      projects: { type: 'string', default: '5000' },
      'per-project': { type: 'string', default: '20' },
      fast: { type: 'string', default: '1000' },
      every: { type: 'string', default: '5' },
      window: { type: 'string', default: '30' },
      connections: { type: 'string', default: '8' },
      'baseline-publishes': { type: 'string', default: '200' },
      'window-publishes': { type: 'string', default: '100' },
      grace: { type: 'string', default: '5' },
      replicas: { type: 'string', default: '1' },
      'kill-at': { type: 'string' },
      dist: COMMON_OPTION_SPECS.dist,
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) {
    console.log(USAGE);
    process.exit(0);
  }
  const perProject = positiveInteger('--per-project', values['per-project']);
  const replicas = positiveInteger('--replicas', values.replicas);
  const killAtSeconds = values['kill-at'] === undefined ? null : positiveInteger('--kill-at', values['kill-at']);
  if (killAtSeconds !== null && replicas < 2) throw new Error('--kill-at needs --replicas 2 or more: the fires must go on');
  if (perProject > 20) throw new Error('--per-project: a project holds at most 20 schedules');
  return {
    projects: positiveInteger('--projects', values.projects),
    perProject,
    fast: positiveInteger('--fast', values.fast),
    everySeconds: positiveInteger('--every', values.every),
    windowSeconds: positiveInteger('--window', values.window),
    connections: positiveInteger('--connections', values.connections),
    baselinePublishes: positiveInteger('--baseline-publishes', values['baseline-publishes']),
    windowPublishes: positiveInteger('--window-publishes', values['window-publishes']),
    graceSeconds: positiveInteger('--grace', values.grace),
    replicas,
    killAtSeconds,
    dist: path.resolve(values.dist),
  };
}

await runBench(USAGE, main);
