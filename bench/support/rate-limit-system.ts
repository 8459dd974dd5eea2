import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { BENCH_DIR, type BusKind } from './cli.js';
import { freePort, startChildServer, type ChildServer } from './child-server.js';
import { deleteStreamsWithPrefix } from './nats-streams.js';
import type { BenchSession } from './session.js';

export interface LimitedSystem {
  server: ChildServer;
  consoleJwtSecret: string;
}

/**
 * The system child of servers.ts's startSystem (gateway and invocation service in one process),
 * with the gateway's RATE_LIMITS switch set and a log file of its own, so two of them (limits
 * on and off) can run side by side in one benchmark. Stopped by the session's cleanup.
 */
export async function startLimitedSystem(
  session: BenchSession,
  options: { name: string; rateLimits: 'on' | 'off'; bus: BusKind; dist: string; databaseUrl: string },
): Promise<LimitedSystem> {
  const port = await freePort();
  const consoleJwtSecret = randomBytes(24).toString('hex');
  const shared: Record<string, string> = { DATABASE_URL: options.databaseUrl, SECRETS_KEY: randomBytes(24).toString('hex') };
  if (options.bus === 'nats') {
    const natsUrl = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';
    const prefix = `bench${randomBytes(5).toString('hex')}`;
    Object.assign(shared, { NATS_URL: natsUrl, BUS_PREFIX: prefix });
    session.onCleanup(`delete streams ${prefix}_*`, () => deleteStreamsWithPrefix(natsUrl, prefix));
  }
  const server = await startChildServer({
    name: options.name,
    args: ['--import', path.join(BENCH_DIR, 'register.mjs'), path.join(BENCH_DIR, 'servers', 'system.server.ts')],
    env: {
      ...process.env,
      ...shared,
      RATE_LIMITS: options.rateLimits,
      RUNLINE_DIST: options.dist,
      BENCH_BUS: options.bus,
      PORT: String(port),
      CONSOLE_JWT_SECRET: consoleJwtSecret,
    },
    port,
    readyPath: '/health/ready',
    logFile: path.join(session.workDir, `${options.name.replace(/\W+/g, '-')}.log`),
  });
  session.onCleanup(`stop ${options.name}`, () => server.stop());
  return { server, consoleJwtSecret };
}
