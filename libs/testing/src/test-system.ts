import { InProcessBus, JetStreamBus, type Bus } from '@runline/bus';
import { createLogger } from '@runline/observability';
import { migrateServices, startService, type RunningService, type ServiceDefinition } from '@runline/runtime';
import { createTestDatabase, testNatsUrl, uniqueBusPrefix, type TestDatabase } from './infrastructure.js';
import { deletePrefixedStreams } from './nats-cleanup.js';

/** Keys every test system uses; never used outside tests. */
export const TEST_CONSOLE_JWT_SECRET = 'test-console-jwt-secret-0123456789';
export const TEST_SECRETS_KEY = 'test-secrets-key-0123456789abcdef';

export interface TestSystemOptions {
  /** `jetstream` (default): real NATS with a unique prefix. `in-process`: the embedded bus. */
  bus?: 'jetstream' | 'in-process';
  /** Extra environment for the services (merged over the test defaults). */
  environment?: NodeJS.ProcessEnv;
  /** Capture the services' log lines (JSON) at `logLevel`, e.g. to prove secrets never reach them. */
  logDestination?: NodeJS.WritableStream;
  logLevel?: string;
}

export interface TestSystem {
  database: TestDatabase;
  bus: Bus;
  busPrefix: string;
  environment: NodeJS.ProcessEnv;
  services: Map<string, RunningService>;
  /** Base URL of a started service. */
  url(service: string): string;
  stop(): Promise<void>;
}

/**
 * Starts the given services in this process on a fresh database and an isolated bus, the way
 * the launcher does in production, and tears everything down in `stop()`.
 */
export async function startTestSystem(definitions: ServiceDefinition[], options: TestSystemOptions = {}): Promise<TestSystem> {
  const database = await createTestDatabase();
  const busPrefix = uniqueBusPrefix();
  const bus: Bus =
    options.bus === 'in-process' ? new InProcessBus() : await JetStreamBus.connect({ url: testNatsUrl(), prefix: busPrefix, name: 'test' });
  const environment: NodeJS.ProcessEnv = {
    ...process.env,
    CONSOLE_JWT_SECRET: TEST_CONSOLE_JWT_SECRET,
    SECRETS_KEY: TEST_SECRETS_KEY,
    ...options.environment,
  };
  const logger = createLogger({
    service: 'test',
    level: options.logLevel ?? process.env.TEST_LOG_LEVEL ?? 'silent',
    destination: options.logDestination,
  });
  const services = new Map<string, RunningService>();
  try {
    await migrateServices(definitions, database.url, logger);
    for (const definition of definitions) {
      services.set(
        definition.name,
        await startService(definition, {
          databaseUrl: database.url,
          bus,
          httpPort: 0,
          environment,
          logger: createLogger({
            service: definition.name,
            level: options.logLevel ?? process.env.TEST_LOG_LEVEL ?? 'silent',
            destination: options.logDestination,
          }),
        }),
      );
    }
  } catch (error) {
    await stopAll(services, bus, database, options.bus === 'in-process' ? undefined : busPrefix);
    throw error;
  }
  return {
    database,
    bus,
    busPrefix,
    environment,
    services,
    url(service) {
      const running = services.get(service);
      if (!running) throw new Error(`service ${service} was not started`);
      return running.url;
    },
    stop: () => stopAll(services, bus, database, options.bus === 'in-process' ? undefined : busPrefix),
  };
}

async function stopAll(services: Map<string, RunningService>, bus: Bus, database: TestDatabase, streamPrefix?: string): Promise<void> {
  for (const service of [...services.values()].reverse()) await service.stop().catch(() => undefined);
  await bus.close().catch(() => undefined);
  if (streamPrefix) await deletePrefixedStreams(testNatsUrl(), streamPrefix);
  await database.drop();
}
