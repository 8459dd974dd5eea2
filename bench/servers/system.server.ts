// The gateway and the invocation service in one process, run from the compiled build the way
// the launcher runs them: migrate both, then startService each on one shared bus. Started by
// the benchmark as a child process; the environment names the build (RUNLINE_DIST), the bus
// (BENCH_BUS: in-process, or nats with NATS_URL and BUS_PREFIX), DATABASE_URL and PORT (the
// gateway's), plus the services' own variables. BENCH_WEBHOOK=on adds the webhook service (the
// inbound hooks' verifier), started like the others in this process. Stops on SIGTERM or when the benchmark goes away.
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const dist = requireEnv('RUNLINE_DIST');
const databaseUrl = requireEnv('DATABASE_URL');
const port = Number(requireEnv('PORT'));
const busKind = requireEnv('BENCH_BUS');
if (busKind !== 'in-process' && busKind !== 'nats') throw new Error('BENCH_BUS must be in-process or nats');

// The compiled packages, through the same `@runline/*` entry points the launcher resolves.
// Types come from the sources the build was made from.
const fromBuild = <T>(name: string): Promise<T> =>
  import(pathToFileURL(path.join(dist, 'node_modules', name, 'index.js')).href) as Promise<T>;
const { migrateServices, startService } = await fromBuild<typeof import('@runline/runtime')>('@runline/runtime');
const { InProcessBus, JetStreamBus } = await fromBuild<typeof import('@runline/bus')>('@runline/bus');
const { createLogger, startTracing } = await fromBuild<typeof import('@runline/observability')>('@runline/observability');
const { gatewayService } = await fromBuild<typeof import('@runline/gateway-service')>('@runline/gateway-service');
const { invocationService } = await fromBuild<typeof import('@runline/invocation-service')>('@runline/invocation-service');
const extra = process.env.BENCH_WEBHOOK === 'on' ? [(await fromBuild<typeof import('@runline/webhook-service')>('@runline/webhook-service')).webhookService] : [];

// As the launcher does: one tracer provider (spans made, exported only with an OTLP endpoint).
const tracing = startTracing({ serviceName: 'runline-bench' });
const logger = createLogger({ service: 'bench-system' });
await migrateServices([gatewayService, invocationService, ...extra], databaseUrl, logger);
const bus =
  busKind === 'nats'
    ? await JetStreamBus.connect({ url: requireEnv('NATS_URL'), prefix: requireEnv('BUS_PREFIX'), name: 'runline-bench' })
    : new InProcessBus();
const start = (definition: typeof gatewayService, httpPort: number) =>
  startService(definition, { databaseUrl, bus, httpPort, httpHost: '127.0.0.1', logger: createLogger({ service: definition.name }) });
// The invocation service first: the benchmark takes the gateway's readiness for the system's,
// so the gateway must not listen before the service its runs go to is up.
const services = [await start(invocationService, 0)];
for (const definition of extra) services.push(await start(definition, 0));
services.push(await start(gatewayService, port));

let stopping = false;
async function stop(): Promise<void> {
  if (stopping) return;
  stopping = true;
  for (const service of services.reverse()) await service.stop();
  await bus.close();
  await tracing.shutdown();
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
