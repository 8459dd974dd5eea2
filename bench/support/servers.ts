import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { BENCH_DIR, type BusKind } from './cli.js';
import { freePort, startChildServer, type ChildServer } from './child-server.js';
import { deleteStreamsWithPrefix } from './nats-streams.js';
import type { BenchSession } from './session.js';

/**
 * The `NODE_OPTIONS` a service's Kubernetes manifest gives it (deploy/kubernetes/base/<service>.yaml):
 * the heap cap also sizes V8's young generation, so without it a service on this 24 GiB machine
 * holds about 130 MB of young generation the deployed pod never has.
 */
export function deployedNodeOptions(service: string): string {
  const manifest = readFileSync(path.join(BENCH_DIR, '..', 'deploy', 'kubernetes', 'base', `${service}.yaml`), 'utf8');
  const match = /- name: NODE_OPTIONS\s+value: (.+)/.exec(manifest);
  if (!match) throw new Error(`deploy/kubernetes/base/${service}.yaml sets no NODE_OPTIONS`);
  return match[1]!.trim();
}

/** Lets the children run this directory's TypeScript (see register.mjs). */
const REGISTER_HOOKS = path.join(BENCH_DIR, 'register.mjs');

/** The baseline child: a bare express 5 hello route (`GET /`). Stopped by the session's cleanup. */
export async function startExpressHello(session: BenchSession): Promise<ChildServer> {
  const port = await freePort();
  const server = await startChildServer({
    name: 'express hello',
    args: ['--import', REGISTER_HOOKS, path.join(BENCH_DIR, 'servers', 'express-hello.server.ts')],
    env: { ...process.env, PORT: String(port) },
    port,
    readyPath: '/',
    logFile: path.join(session.workDir, 'express.log'),
  });
  session.onCleanup('stop express', () => server.stop());
  return server;
}

export interface SystemOptions {
  bus: BusKind;
  /** Run under `node --cpu-prof`; the profile lands in `profileDir` when the child exits. */
  profile: boolean;
  dist: string;
  databaseUrl: string;
  /** Also run the webhook service in the system's process (the inbound hooks' verifier). */
  webhook?: boolean;
  /** Service variables for this system only (on top of the benchmark's environment). */
  env?: Record<string, string>;
}

export interface RunningSystem {
  server: ChildServer;
  /** Signs the console JWTs the setup uses. */
  consoleJwtSecret: string;
  /** Where `--cpu-prof` writes, when profiling. */
  profileDir: string;
  /**
   * What another service's process needs to join this system: DATABASE_URL, SECRETS_KEY and,
   * with NATS, NATS_URL and BUS_PREFIX.
   */
  shared: SharedEnvironment;
}

/** The variables every process of one benchmark system has in common. */
export interface SharedEnvironment {
  DATABASE_URL: string;
  SECRETS_KEY: string;
  NATS_URL?: string;
  BUS_PREFIX?: string;
}

/** True when `dist` holds a build the system child can load. */
export function hasBuild(dist: string): boolean {
  return existsSync(path.join(dist, 'node_modules', '@runline', 'runtime', 'index.js'));
}

/**
 * The system child (servers/system.server.ts): gateway and invocation service in one process,
 * on the in-process bus or on NATS (NATS_URL, default nats://127.0.0.1:4222) under a unique
 * BUS_PREFIX whose streams are deleted afterwards. Logging stays at the production default
 * (LOG_LEVEL, default info). Stopped by the session's cleanup.
 */
export async function startSystem(session: BenchSession, options: SystemOptions): Promise<RunningSystem> {
  const profileDir = path.join(session.workDir, 'profiles');
  const profiling = options.profile ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [];
  const port = await freePort();
  const consoleJwtSecret = randomBytes(24).toString('hex');
  const shared: SharedEnvironment = { DATABASE_URL: options.databaseUrl, SECRETS_KEY: randomBytes(24).toString('hex') };
  if (options.bus === 'nats') {
    const natsUrl = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';
    const prefix = `bench${randomBytes(5).toString('hex')}`;
    Object.assign(shared, { NATS_URL: natsUrl, BUS_PREFIX: prefix });
    // Registered before the start, so streams are removed even if the child fails half-way;
    // it runs after the child has stopped (cleanups run in reverse order).
    session.onCleanup(`delete streams ${prefix}_*`, () => deleteStreamsWithPrefix(natsUrl, prefix));
  }
  const server = await startChildServer({
    name: 'system',
    args: [...profiling, '--import', REGISTER_HOOKS, path.join(BENCH_DIR, 'servers', 'system.server.ts')],
    env: { ...process.env, ...shared, RUNLINE_DIST: options.dist, BENCH_BUS: options.bus, PORT: String(port), CONSOLE_JWT_SECRET: consoleJwtSecret,
      ...(options.webhook ? { BENCH_WEBHOOK: 'on' } : {}), ...options.env },
    port,
    readyPath: '/health/ready',
    logFile: path.join(session.workDir, 'system.log'),
  });
  session.onCleanup('stop the system', () => server.stop());
  return { server, consoleJwtSecret, profileDir, shared };
}

/**
 * The scheduler service in a child process of its own, as it is deployed (its own pod): the
 * build's `services/scheduler/main.js`, on the system's NATS prefix and database, applying its
 * own migrations at start (RUN_MIGRATIONS=true, as a deployment may), with its manifest's
 * NODE_OPTIONS. servers/exit-with-parent.mjs
 * only adds the IPC watch that stops it when the benchmark goes away; no TypeScript hooks, whose
 * compiler would add about 200 MB to the RSS the schedules benchmark measures. Stopped by the
 * session's cleanup, before the streams are deleted.
 */
export async function startScheduler(session: BenchSession, system: RunningSystem, dist: string, name = 'scheduler'): Promise<ChildServer> {
  if (system.shared.NATS_URL === undefined) throw new Error('the scheduler runs in its own process only on NATS');
  const port = await freePort();
  const server = await startChildServer({
    name,
    args: ['--import', path.join(BENCH_DIR, 'servers', 'exit-with-parent.mjs'), path.join(dist, 'services', 'scheduler', 'main.js')],
    env: { ...process.env, ...system.shared, PORT: String(port), HOST: '127.0.0.1', RUN_MIGRATIONS: 'true', NODE_OPTIONS: deployedNodeOptions('scheduler') },
    port,
    readyPath: '/health/ready',
    logFile: path.join(session.workDir, `${name}.log`),
  });
  session.onCleanup(`stop ${name}`, () => server.stop());
  return server;
}
