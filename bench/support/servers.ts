import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { BENCH_DIR, type BusKind } from './cli.js';
import { freePort, startChildServer, type ChildServer } from './child-server.js';
import { deleteStreamsWithPrefix } from './nats-streams.js';
import type { BenchSession } from './session.js';

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
}

export interface RunningSystem {
  server: ChildServer;
  /** Signs the console JWTs the setup uses. */
  consoleJwtSecret: string;
  /** Where `--cpu-prof` writes, when profiling. */
  profileDir: string;
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
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    RUNLINE_DIST: options.dist,
    BENCH_BUS: options.bus,
    DATABASE_URL: options.databaseUrl,
    PORT: String(port),
    CONSOLE_JWT_SECRET: consoleJwtSecret,
    SECRETS_KEY: randomBytes(24).toString('hex'),
  };
  if (options.bus === 'nats') {
    const natsUrl = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';
    const prefix = `bench${randomBytes(5).toString('hex')}`;
    Object.assign(env, { NATS_URL: natsUrl, BUS_PREFIX: prefix });
    // Registered before the start, so streams are removed even if the child fails half-way;
    // it runs after the child has stopped (cleanups run in reverse order).
    session.onCleanup(`delete streams ${prefix}_*`, () => deleteStreamsWithPrefix(natsUrl, prefix));
  }
  const server = await startChildServer({
    name: 'system',
    args: [...profiling, '--import', REGISTER_HOOKS, path.join(BENCH_DIR, 'servers', 'system.server.ts')],
    env,
    port,
    readyPath: '/health/ready',
    logFile: path.join(session.workDir, 'system.log'),
  });
  session.onCleanup('stop the system', () => server.stop());
  return { server, consoleJwtSecret, profileDir };
}
