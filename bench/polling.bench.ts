// Polling benchmark: 1,000 polling triggers at intervalMs 1000 against a local
// endpoint for --seconds (default 60). Prints poll-start jitter against each trigger's due
// time (endpoint arrival − due; p50, p99, max) and the polling service's CPU share, next to a
// baseline measured in the same run: a bare setTimeout poller in the benchmark process sending
// the same GETs (node:http, a fresh connection each, like the outbound guard) on the same schedule.
// Goal: p99 <= 50 ms with the polling service below half a core.
//
// The polling service runs from the build in its own process, on NATS and a fresh database;
// triggers are inserted into its table (due times spread over one second), so the gateway is
// not part of the measurement. The endpoint answers [] (nothing new): no runs are started.
//
//   npm run build && npm run bench:polling -- [--triggers 1000] [--seconds 60] [--baseline-seconds 15]
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { openBenchDatabase } from './support/bench-database.js';
import { freePort, processCpuSeconds, startChildServer } from './support/child-server.js';
import { distributionOf, type Distribution } from './support/distribution.js';
import { deleteStreamsWithPrefix } from './support/nats-streams.js';

const BENCH_DIR = path.dirname(new URL(import.meta.url).pathname);
const REGISTER_HOOKS = path.join(BENCH_DIR, 'register.mjs');
const INTERVAL_MS = 1000;
/** Polls in the first seconds (start-up, first claims) are not measured. */
const WARMUP_MS = 5000;

const { values } = parseArgs({
  options: {
    triggers: { type: 'string', default: '1000' },
    seconds: { type: 'string', default: '60' },
    'baseline-seconds': { type: 'string', default: '15' },
    dist: { type: 'string', default: path.join(BENCH_DIR, '..', 'dist') },
  },
});
const triggers = Number(values.triggers);
const seconds = Number(values.seconds);
const baselineSeconds = Number(values['baseline-seconds']);
const dist = path.resolve(values.dist!);

const cleanups: Array<() => Promise<unknown>> = [];
const workDir = `/tmp/runline-bench-polling-${randomBytes(4).toString('hex')}`;
await import('node:fs/promises').then((fs) => fs.mkdir(workDir, { recursive: true }));

try {
  const endpointPort = await freePort();
  const endpoint = await startChildServer({
    name: 'endpoint',
    args: ['--import', REGISTER_HOOKS, path.join(BENCH_DIR, 'servers', 'polling-endpoint.server.ts')],
    env: { ...process.env, PORT: String(endpointPort) },
    port: endpointPort,
    readyPath: '/ready',
    logFile: path.join(workDir, 'endpoint.log'),
  });
  cleanups.push(() => endpoint.stop());

  // Baseline: the same schedule with bare timers, measured in this process.
  const baseline = await bareTimerPoller(`${endpoint.url}/b/`, triggers, baselineSeconds * 1000);

  const database = await openBenchDatabase(process.env);
  cleanups.push(() => database.drop());
  const natsUrl = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';
  const prefix = `bench${randomBytes(5).toString('hex')}`;
  cleanups.push(() => deleteStreamsWithPrefix(natsUrl, prefix));
  const pollingPort = await freePort();
  const polling = await startChildServer({
    name: 'polling',
    args: ['--import', REGISTER_HOOKS, path.join(BENCH_DIR, 'servers', 'polling-service.server.ts')],
    env: {
      ...process.env,
      RUNLINE_DIST: dist,
      DATABASE_URL: database.url,
      NATS_URL: natsUrl,
      BUS_PREFIX: prefix,
      PORT: String(pollingPort),
      HOST: '127.0.0.1',
      RUN_MIGRATIONS: 'true',
      SECRETS_KEY: randomBytes(24).toString('hex'),
      OUTBOUND_ALLOWED_CIDRS: '127.0.0.0/8',
      LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn',
    },
    port: pollingPort,
    readyPath: '/health/ready',
    logFile: path.join(workDir, 'polling.log'),
  });
  cleanups.push(() => polling.stop());

  const firstDue = Date.now() + 3000;
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  const ids: string[] = [];
  const rows: string[] = [];
  const params: unknown[] = [];
  for (let i = 0; i < triggers; i++) {
    const at = new Date(firstDue + Math.floor((i * INTERVAL_MS) / triggers));
    params.push(`${endpoint.url}/p/${i}`, at, `bench-${i}`);
    rows.push(`(gen_random_uuid(), gen_random_uuid(), '00000000-0000-4000-8000-000000000001', $${params.length}, 'bench', $${params.length - 2}, 'id', NULL, ${INTERVAL_MS}, $${params.length - 1}, now(), now())`);
    ids.push(String(i));
  }
  await client.query(
    `INSERT INTO polling.polling_triggers (id, org_id, project_id, poll_key, source, poll_endpoint, dedupe_field, sealed_auth_header, interval_ms, next_poll_at, created_at, updated_at)
     VALUES ${rows.join(', ')}`,
    params,
  );
  await client.end();

  const measureFrom = firstDue + WARMUP_MS;
  const measureTo = firstDue + seconds * 1000;
  await sleep(measureFrom - Date.now());
  const cpuStart = processCpuSeconds(polling.pid);
  await sleep(measureTo - Date.now());
  const cpuEnd = processCpuSeconds(polling.pid);
  // A poll due just before the window ends arrives a little after it: wait for it, so a late
  // poll counts as late, not as missing.
  await sleep(INTERVAL_MS / 2);
  const report = (await (await fetch(`${endpoint.url}/report`)).json()) as Record<string, number[]>;

  const jitter: number[] = [];
  let missed = 0;
  for (let i = 0; i < triggers; i++) {
    const first = firstDue + Math.floor((i * INTERVAL_MS) / triggers);
    const arrivals = (report[String(i)] ?? []).filter((at) => at >= measureFrom - INTERVAL_MS / 2 && at < measureTo + INTERVAL_MS / 2);
    const dues = new Set<number>();
    for (const at of arrivals) {
      const k = Math.round((at - first) / INTERVAL_MS);
      const due = first + k * INTERVAL_MS;
      dues.add(k);
      if (due >= measureFrom && due < measureTo) jitter.push(at - due);
    }
    // Due times first + k·interval in [measureFrom, measureTo).
    const expected = Math.ceil((measureTo - first) / INTERVAL_MS) - Math.ceil((measureFrom - first) / INTERVAL_MS);
    missed += Math.max(0, expected - [...dues].filter((k) => first + k * INTERVAL_MS >= measureFrom && first + k * INTERVAL_MS < measureTo).length);
  }
  const service = distributionOf(jitter);
  const cores = cpuStart !== undefined && cpuEnd !== undefined ? (cpuEnd - cpuStart) / ((measureTo - measureFrom) / 1000) : Number.NaN;

  console.log(`polling benchmark: ${triggers} triggers at intervalMs ${INTERVAL_MS}, measured ${(measureTo - measureFrom) / 1000} s after ${WARMUP_MS / 1000} s warm-up`);
  console.log(row('bare setTimeout poller (baseline)', baseline.jitter, baseline.cores));
  console.log(row('polling service', service, cores));
  console.log(`  polls measured: ${service.count}, due polls missing: ${missed}`);
  console.log(`  ratio service/baseline: p99 ${(service.p99 / baseline.jitter.p99).toFixed(1)}x, CPU ${(cores / baseline.cores).toFixed(2)}x`);
  console.log(`  goal: p99 <= 50 ms (${service.p99 <= 50 ? 'met' : 'NOT met'}), CPU < 0.5 cores (${cores < 0.5 ? 'met' : 'NOT met'})`);
} finally {
  for (const cleanup of cleanups.reverse()) await cleanup().catch((error: unknown) => console.error('cleanup failed', error));
}

function row(name: string, d: Distribution, cores: number): string {
  return `  ${name.padEnd(36)} jitter p50 ${d.p50.toFixed(1)} ms, p99 ${d.p99.toFixed(1)} ms, max ${d.max.toFixed(1)} ms; CPU ${cores.toFixed(3)} cores`;
}

/** The baseline: one timer per trigger, each GET sent at its due time; jitter is send − due. */
async function bareTimerPoller(base: string, count: number, durationMs: number): Promise<{ jitter: Distribution; cores: number }> {
  const start = Date.now() + 1000;
  const end = start + durationMs;
  const warmupEnd = start + 2000;
  const jitter: number[] = [];
  const pollAt = (i: number, due: number): void => {
    if (due >= end) return;
    setTimeout(() => {
      const now = Date.now();
      if (due >= warmupEnd) jitter.push(now - due);
      const request = http.get(`${base}${i}`, { agent: false }, (response) => {
        response.resume();
      });
      request.on('error', () => undefined);
      pollAt(i, due + INTERVAL_MS);
    }, Math.max(0, due - Date.now()));
  };
  for (let i = 0; i < count; i++) pollAt(i, start + Math.floor((i * INTERVAL_MS) / count));
  await sleep(warmupEnd - Date.now());
  const cpuStart = process.cpuUsage();
  await sleep(end - Date.now() + 200);
  const used = process.cpuUsage(cpuStart);
  return { jitter: distributionOf(jitter), cores: (used.user + used.system) / 1e6 / ((end - warmupEnd + 200) / 1000) };
}
