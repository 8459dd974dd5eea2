// The gateway alone in one process, run from the compiled build the way the launcher runs it
// (migrate, then startService), with the in-process bus. Started by the benchmark as a child
// process; the environment names the build (RUNLINE_DIST), DATABASE_URL and PORT, plus the
// gateway's own variables. Stops on SIGTERM or when the benchmark goes away.
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const dist = requireEnv('RUNLINE_DIST');
const databaseUrl = requireEnv('DATABASE_URL');
const port = Number(requireEnv('PORT'));

// The compiled packages, through the same `@runline/*` entry points the launcher resolves.
// Types come from the sources the build was made from.
const fromBuild = <T>(name: string): Promise<T> =>
  import(pathToFileURL(path.join(dist, 'node_modules', name, 'index.js')).href) as Promise<T>;
const { migrateServices, startService } = await fromBuild<typeof import('@runline/runtime')>('@runline/runtime');
const { InProcessBus } = await fromBuild<typeof import('@runline/bus')>('@runline/bus');
const { createLogger } = await fromBuild<typeof import('@runline/observability')>('@runline/observability');
const { gatewayService } = await fromBuild<typeof import('@runline/gateway-service')>('@runline/gateway-service');

const logger = createLogger({ service: 'gateway' });
await migrateServices([gatewayService], databaseUrl, logger);
const bus = new InProcessBus();
const service = await startService(gatewayService, { databaseUrl, bus, httpPort: port, httpHost: '127.0.0.1', logger });

let stopping = false;
async function stop(): Promise<void> {
  if (stopping) return;
  stopping = true;
  await service.stop();
  await bus.close();
  // A normal exit, so `--cpu-prof` writes its profile.
  process.exit(0);
}
process.once('SIGTERM', () => void stop());
process.once('disconnect', () => void stop());

function requireEnv(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} must be set`);
  return value;
}
