import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { openBenchDatabase } from './bench-database.js';
import { freePort, logTail, startChildServer, type ChildServer } from './child-server.js';
import { BENCH_DIR } from './cli.js';
import { authorizedJson, checkAnswers, setUpFlowTrigger } from './console-setup.js';
import { cpuProfileFlags } from './cpu-profile.js';
import type { LoadTarget } from './load.js';
import { deleteStreamsWithPrefix } from './nats-streams.js';
import type { WatchedProcess } from './rss-sampler.js';

/**
 * What one system has set up (processes, database, streams), undone in reverse order by
 * `close`: when the benchmark is done with the system, so the next one has the machine to
 * itself, and from the session's cleanup on failure or Ctrl-C. Closing twice is harmless.
 */
export class SystemScope {
  private readonly cleanups: Array<{ what: string; run: () => Promise<unknown> }> = [];

  constructor(readonly workDir: string) {}

  onCleanup(what: string, run: () => Promise<unknown>): void {
    this.cleanups.push({ what, run });
  }

  async close(): Promise<void> {
    while (this.cleanups.length > 0) {
      const cleanup = this.cleanups.pop();
      try {
        await cleanup?.run();
      } catch (error) {
        console.error(`cleanup failed (${cleanup?.what}): ${(error as Error).message}`);
      }
    }
  }
}

/** Work a system has accepted, by state, counted in its database. */
export interface WorkCounts {
  /** Accepted, not yet final. */
  open: number;
  succeeded: number;
  /** Final but not succeeded: the work was not what the benchmark asked for. */
  other: number;
}

/** One system under sustained load: the request to send, its processes, its backlog. */
export interface SustainedSystem {
  label: string;
  target: LoadTarget;
  processes: WatchedProcess[];
  counts(): Promise<WorkCounts>;
  /** The children's logs, for a failure report. */
  logTails(): string;
}

/**
 * EVERY_MATCH: every call runs the flow (under the project default, ONE_TIME, every call after
 * the first for customer c-1 would end at the enrollment check without running it).
 */
export const TRIGGER_BODY = JSON.stringify({ event: 'order.created', customerId: 'c-1', orderId: '42', enrollmentPolicy: 'EVERY_MATCH' });

/** Every Runline service, each in a process of its own as deployed. */
const RUNLINE_SERVICES = ['gateway', 'invocation', 'scheduler', 'polling', 'dead-letter', 'callback', 'webhook'] as const;

/**
 * Preloaded into children that run without the TypeScript hooks: they exit when the benchmark
 * goes away. Those hooks would load the TypeScript compiler into the process, and its memory
 * into the RSS measured.
 */
const EXIT_WITH_PARENT = path.join(BENCH_DIR, 'servers', 'exit-with-parent.mjs');

const RUNLINE_COUNTS_SQL = `
  SELECT count(*) FILTER (WHERE status IN ('QUEUED', 'RUNNING'))::int AS open,
         count(*) FILTER (WHERE status = 'SUCCEEDED')::int AS succeeded,
         count(*) FILTER (WHERE status NOT IN ('QUEUED', 'RUNNING', 'SUCCEEDED'))::int AS other
    FROM invocation.invocation_views WHERE mode = 'ASYNC'`;

const PEER_COUNTS_SQL = `
  SELECT count(*) FILTER (WHERE state IN ('created', 'retry', 'active'))::int AS open,
         count(*) FILTER (WHERE state = 'completed')::int AS succeeded,
         count(*) FILTER (WHERE state IN ('failed', 'cancelled'))::int AS other
    FROM pgboss.job WHERE name = 'flow-run'`;

/**
 * Runline as deployed: every service in its own process (the build's `services/<name>/main.js`),
 * on NATS JetStream (NATS_URL, default nats://127.0.0.1:4222) under a unique BUS_PREFIX and on a
 * fresh database (or DATABASE_URL), each service migrated first with `main.js migrate`. The
 * organization, project and token are made through the console API.
 */
export async function startRunline(scope: SystemScope, dist: string, { flowControl = false } = {}): Promise<SustainedSystem> {
  const database = await openBenchDatabase(process.env);
  scope.onCleanup('drop the Runline database', () => database.drop());
  const natsUrl = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';
  const prefix = `bench${randomBytes(5).toString('hex')}`;
  scope.onCleanup(`delete streams ${prefix}_*`, () => deleteStreamsWithPrefix(natsUrl, prefix));
  const consoleJwtSecret = randomBytes(24).toString('hex');
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DATABASE_URL: database.url,
    NATS_URL: natsUrl,
    BUS_PREFIX: prefix,
    HOST: '127.0.0.1',
    CONSOLE_JWT_SECRET: consoleJwtSecret,
    SECRETS_KEY: randomBytes(24).toString('hex'),
  };
  delete env.RUN_MIGRATIONS;
  for (const service of RUNLINE_SERVICES) await migrate(scope, dist, service, env);
  const servers = await Promise.all(
    RUNLINE_SERVICES.map(async (service) => {
      const port = await freePort();
      const server = await startChildServer({
        name: service,
        args: ['--import', EXIT_WITH_PARENT, ...profiling(scope.workDir), path.join(dist, 'services', service, 'main.js')],
        env: { ...env, PORT: String(port) },
        port,
        readyPath: '/health/ready',
        logFile: path.join(scope.workDir, `${service}.log`),
      });
      scope.onCleanup(`stop ${service}`, () => server.stop());
      return server;
    }),
  );
  const gateway = servers[0]!;
  const target = await flowTriggerTarget(gateway.url, consoleJwtSecret, flowControl);
  const counter = await countingClient(scope, database.url, RUNLINE_COUNTS_SQL);
  return {
    label: `Runline (${RUNLINE_SERVICES.length} services, each in its own process, on NATS${flowControl ? '; flow control configured, not binding' : ''})`,
    target,
    processes: servers.map(({ name, pid }) => ({ name, pid })),
    counts: counter,
    logTails: () => tails(servers),
  };
}

/**
 * Runline's one-process mode as `npm start` runs it (the build's `launcher/main.js` with its
 * Node flags, the in-process bus), but on a fresh database of the shared PostgreSQL server
 * instead of an embedded one: the pg-boss peer's server, so the two differ only in what runs
 * in their one Node process. The launcher migrates at start.
 */
export async function startOneProcess(scope: SystemScope, dist: string): Promise<SustainedSystem> {
  const database = await openBenchDatabase(process.env);
  scope.onCleanup('drop the Runline database', () => database.drop());
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'runline-bench-one-process-'));
  scope.onCleanup(`remove ${dataDir}`, async () => rmSync(dataDir, { recursive: true, force: true }));
  const { NATS_URL: _nats, BUS_PREFIX: _prefix, ...rest } = process.env;
  const consoleJwtSecret = randomBytes(24).toString('hex');
  const port = await freePort();
  const started = npmStartCommand();
  const launcher = await startChildServer({
    name: 'launcher',
    args: [...started.nodeFlags, '--import', EXIT_WITH_PARENT, ...profiling(scope.workDir), path.join(dist, 'launcher', 'main.js')],
    env: {
      ...rest,
      ...started.env,
      DATABASE_URL: database.url,
      PORT: String(port),
      HOST: '127.0.0.1',
      RUNLINE_DATA_DIR: dataDir,
      CONSOLE_JWT_SECRET: consoleJwtSecret,
      SECRETS_KEY: randomBytes(24).toString('hex'),
    },
    port,
    readyPath: '/health/ready',
    logFile: path.join(scope.workDir, 'launcher.log'),
    readyTimeoutMs: 180_000,
  });
  scope.onCleanup('stop the launcher', () => launcher.stop());
  const target = await flowTriggerTarget(launcher.url, consoleJwtSecret);
  return {
    label: 'Runline one process (npm start\'s launcher: every service in one process, the in-process bus, the shared PostgreSQL)',
    target,
    processes: [{ name: 'launcher', pid: launcher.pid }],
    counts: await countingClient(scope, database.url, RUNLINE_COUNTS_SQL),
    logTails: () => tails([launcher]),
  };
}

export interface PeerSettings {
  workers: number;
  batchSize: number;
  pollSeconds: number;
  poolSize: number;
}

/**
 * The pg-boss peer (servers/pg-boss-peer.server.mjs) on a database of its own, always a fresh
 * one (never DATABASE_URL): it shares no table with Runline's.
 */
export async function startPgBossPeer(scope: SystemScope, dist: string, settings: PeerSettings): Promise<SustainedSystem> {
  const { DATABASE_URL: _ignored, ...rest } = process.env;
  const database = await openBenchDatabase(rest);
  scope.onCleanup('drop the pg-boss database', () => database.drop());
  const port = await freePort();
  const server = await startChildServer({
    name: 'pg-boss peer',
    args: ['--import', EXIT_WITH_PARENT, path.join(BENCH_DIR, 'servers', 'pg-boss-peer.server.mjs')],
    env: {
      ...rest,
      DATABASE_URL: database.url,
      PORT: String(port),
      RUNLINE_DIST: dist,
      PEER_WORKERS: String(settings.workers),
      PEER_BATCH_SIZE: String(settings.batchSize),
      PEER_POLL_SECONDS: String(settings.pollSeconds),
      PEER_POOL_SIZE: String(settings.poolSize),
    },
    port,
    readyPath: '/health/ready',
    logFile: path.join(scope.workDir, 'pg-boss-peer.log'),
  });
  scope.onCleanup('stop the pg-boss peer', () => server.stop());
  const target: LoadTarget = {
    label: 'pg-boss send (POST /trigger-async)',
    url: `${server.url}/trigger-async`,
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: TRIGGER_BODY,
    expectedStatus: 202,
  };
  await checkAnswers([{ what: 'pg-boss peer', url: target.url, headers: target.headers!, body: TRIGGER_BODY, expectedStatus: 202 }]);
  return {
    label: `pg-boss ${pgBossVersion()} peer (Fastify + pg-boss send + worker, one process)`,
    target,
    processes: [{ name: 'pg-boss peer', pid: server.pid }],
    counts: await countingClient(scope, database.url, PEER_COUNTS_SQL),
    logTails: () => tails([server]),
  };
}

/** The version of pg-boss the peer runs: package.json's, as installed. */
function pgBossVersion(): string {
  return (JSON.parse(readFileSync(path.join(BENCH_DIR, '..', 'node_modules', 'pg-boss', 'package.json'), 'utf8')) as { version: string }).version;
}

/**
 * `npm start`'s process: the build's `launcher/main.js` in embedded mode (an embedded
 * PostgreSQL it starts itself, the in-process bus), its data in a temporary directory removed
 * afterwards (outside any 0700 home, so PostgreSQL's own OS user can reach it).
 */
export async function startEmbedded(scope: SystemScope, dist: string, name: string): Promise<SustainedSystem & { launcher: ChildServer }> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'runline-bench-embedded-'));
  chmodSync(dataDir, 0o755);
  scope.onCleanup(`remove ${dataDir}`, async () => rmSync(dataDir, { recursive: true, force: true }));
  const { DATABASE_URL: _database, NATS_URL: _nats, BUS_PREFIX: _prefix, ...rest } = process.env;
  const consoleJwtSecret = randomBytes(24).toString('hex');
  const port = await freePort();
  const started = npmStartCommand();
  const launcher = await startChildServer({
    name,
    args: [...started.nodeFlags, '--import', EXIT_WITH_PARENT, path.join(dist, 'launcher', 'main.js')],
    env: {
      ...rest,
      ...started.env,
      PORT: String(port),
      HOST: '127.0.0.1',
      RUNLINE_DATA_DIR: dataDir,
      CONSOLE_JWT_SECRET: consoleJwtSecret,
      SECRETS_KEY: randomBytes(24).toString('hex'),
    },
    port,
    readyPath: '/health/ready',
    logFile: path.join(scope.workDir, `${name}.log`),
    readyTimeoutMs: 180_000,
  });
  scope.onCleanup(`stop ${name}`, () => launcher.stop());
  const target = await flowTriggerTarget(launcher.url, consoleJwtSecret);
  return {
    label: 'Runline embedded (npm start: one process, embedded PostgreSQL, in-process bus)',
    target,
    processes: [{ name: 'launcher', pid: launcher.pid }],
    counts: await countingClient(scope, embeddedDatabaseUrl(path.join(dataDir, 'pgdata')), RUNLINE_COUNTS_SQL),
    logTails: () => tails([launcher]),
    launcher,
  };
}

/** The benchmark's own embedded cluster: its port from postmaster.pid, its password from the file initdb left. */
function embeddedDatabaseUrl(pgdata: string): string {
  const port = readFileSync(path.join(pgdata, 'postmaster.pid'), 'utf8').split('\n')[3]?.trim();
  const { user, password } = JSON.parse(readFileSync(path.join(pgdata, 'runline-credentials.json'), 'utf8')) as { user: string; password: string };
  return `postgres://${user}:${encodeURIComponent(password)}@127.0.0.1:${port}/runline`;
}

/** The async flow trigger of a fresh organization's chatbot project, checked before any load. */
async function flowTriggerTarget(gatewayUrl: string, consoleJwtSecret: string, flowControl = false): Promise<LoadTarget> {
  const trigger = await setUpFlowTrigger(gatewayUrl, consoleJwtSecret, { flowControl });
  const url = `${gatewayUrl}${trigger.path}-async`;
  await checkAnswers([
    { what: 'async trigger, no token', url, headers: { 'content-type': 'application/json' }, body: TRIGGER_BODY, expectedStatus: 401 },
    {
      what: 'async trigger',
      url,
      headers: authorizedJson(trigger),
      body: TRIGGER_BODY,
      expectedStatus: 202,
      checkBody: (body) => ((body as { status?: unknown } | undefined)?.status === 'QUEUED' ? undefined : 'expected a QUEUED run'),
    },
  ]);
  return { label: 'Runline trigger-async', url, method: 'POST', headers: authorizedJson(trigger), body: TRIGGER_BODY, expectedStatus: 202 };
}

async function countingClient(scope: SystemScope, databaseUrl: string, sql: string): Promise<() => Promise<WorkCounts>> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  scope.onCleanup('close a counting connection', () => client.end());
  return async () => {
    const { rows } = await client.query<WorkCounts>(sql);
    return rows[0] ?? { open: 0, succeeded: 0, other: 0 };
  };
}

/** `node <dist>/services/<service>/main.js migrate`, as a deployment's migration step. */
/**
 * How `npm start` runs the launcher, read from package.json's `start` script (`… && VAR=value
 * node --flag dist/launcher/main.js`): its environment settings and Node flags (a smaller young
 * generation and fewer malloc arenas, which keep the process's memory down; bench/README.md
 * "Sustained throughput"), so the embedded benchmark measures the process as npm start starts it.
 */
function npmStartCommand(): { env: Record<string, string>; nodeFlags: string[] } {
  const scripts = (JSON.parse(readFileSync(path.join(BENCH_DIR, '..', 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;
  const command = scripts.start?.split('&&').pop()?.trim() ?? '';
  const match = /^((?:\w+=\S+\s+)*)node\s+((?:--\S+\s+)*)dist\/launcher\/main\.js$/.exec(command);
  if (!match) throw new Error(`package.json's start script does not end with "[VAR=value …] node [--flag …] dist/launcher/main.js": ${command}`);
  const env = Object.fromEntries(match[1]!.trim().split(/\s+/).filter(Boolean).map((pair) => pair.split('=', 2) as [string, string]));
  return { env, nodeFlags: match[2]!.trim().split(/\s+/).filter(Boolean) };
}

/**
 * `BENCH_CPU_PROFILE=1`: each Runline service runs under `--cpu-prof`, its profile written to
 * the work directory's `profiles/` when it stops (kept: the run then keeps its work directory).
 */
function profiling(workDir: string): string[] {
  return cpuProfileFlags(path.join(workDir, 'profiles'));
}

async function migrate(scope: SystemScope, dist: string, service: string, env: NodeJS.ProcessEnv): Promise<void> {
  const logFile = path.join(scope.workDir, `${service}-migrate.log`);
  const log = openSync(logFile, 'w');
  const child = spawn(process.execPath, [path.join(dist, 'services', service, 'main.js'), 'migrate'], { env, stdio: ['ignore', log, log] });
  closeSync(log);
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  if (code !== 0) throw new Error(`migrating ${service} exited ${code}:\n${logTail(logFile)}`);
}

function tails(servers: ChildServer[]): string {
  return servers.map((server) => `--- ${server.logFile} (end) ---\n${logTail(server.logFile, 10)}`).join('\n');
}
