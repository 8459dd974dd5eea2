import path from 'node:path';
import { InProcessBus, JetStreamBus, type Bus } from '@runline/bus';
import { startEmbeddedPostgres, type EmbeddedPostgres } from '@runline/db';
import { createLogger, startTracing } from '@runline/observability';
import { loadConfig, migrateServices, startService, type RunningService } from '@runline/runtime';
import { startBanner } from './banner.js';
import { writeDemoEnv } from './demo-env.js';
import { seedDemo } from './demo-seed.js';
import { DEVELOPMENT_CONSOLE_JWT_SECRET, DEVELOPMENT_SECRETS_KEY, LauncherConfig } from './launcher.config.js';
import { launcherLogs } from './launcher-logs.js';
import { ALL_SERVICES } from './services.js';

/**
 * `npm start`: all seven services in one process. Embedded PostgreSQL and the in-process bus by
 * default; a real server and NATS when DATABASE_URL / NATS_URL are set.
 */
let config: LauncherConfig;
try {
  config = loadConfig(LauncherConfig);
} catch (error) {
  createLogger({ service: 'launcher', level: 'info' }).fatal((error as Error).message);
  process.exit(1);
}

// One tracer provider for the process; every service's spans name it in `runline.service`.
const tracing = startTracing({ serviceName: 'runline' });
const dataDir = path.resolve(config.RUNLINE_DATA_DIR);
// Every logger of the process writes to the log file, and warnings (or LOG_LEVEL) to the terminal.
const logs = launcherLogs({ dataDir, logLevel: config.LOG_LEVEL });
const serviceLogger = (service: string) => createLogger({ service, level: logs.level, destination: logs.destination });
const logger = serviceLogger('launcher');
const running: RunningService[] = [];
let embeddedPostgres: EmbeddedPostgres | undefined;
let bus: Bus | undefined;

async function start(): Promise<void> {
  if (!config.DATABASE_URL) {
    logger.info({ dataDir: path.join(dataDir, 'pgdata') }, 'starting embedded PostgreSQL');
    embeddedPostgres = await startEmbeddedPostgres({ dataDir: path.join(dataDir, 'pgdata') });
  }
  const databaseUrl = config.DATABASE_URL ?? embeddedPostgres!.url;
  bus = config.NATS_URL
    ? await JetStreamBus.connect({ url: config.NATS_URL, prefix: config.BUS_PREFIX ?? '', name: 'runline', streamReplicas: config.BUS_STREAM_REPLICAS })
    : new InProcessBus();

  const environment: NodeJS.ProcessEnv = {
    ...process.env,
    CONSOLE_JWT_SECRET: config.CONSOLE_JWT_SECRET ?? DEVELOPMENT_CONSOLE_JWT_SECRET,
    SECRETS_KEY: config.SECRETS_KEY ?? DEVELOPMENT_SECRETS_KEY,
  };
  await migrateServices([...ALL_SERVICES], databaseUrl, logger);
  for (const definition of ALL_SERVICES) {
    const isGateway = definition.name === 'gateway';
    running.push(
      await startService(definition, {
        databaseUrl,
        bus,
        // The internal services serve only health and metrics; any free port will do.
        httpPort: isGateway ? config.PORT : 0,
        httpHost: config.HOST,
        environment,
        logger: serviceLogger(definition.name),
      }),
    );
  }

  const gatewayUrl = running[0]!.url;
  const demo = await seedDemo({
    gatewayUrl,
    jwtSecret: environment.CONSOLE_JWT_SECRET!,
    dataDir,
    databaseKey: config.DATABASE_URL ?? `embedded:${dataDir}`,
  });
  const demoEnvFile = await writeDemoEnv(dataDir, gatewayUrl, demo);
  process.stdout.write(
    startBanner({
      gatewayUrl,
      demo,
      demoEnvFile,
      logDescription: logs.description,
      usingDevelopmentJwtSecret: !config.CONSOLE_JWT_SECRET && !process.env.CONSOLE_JWT_PUBLIC_KEY,
      databaseDescription: config.DATABASE_URL ? 'DATABASE_URL' : `embedded PostgreSQL, data in ${path.join(dataDir, 'pgdata')}`,
      busDescription: config.NATS_URL ? `NATS JetStream at ${config.NATS_URL}` : 'in-process bus',
    }),
  );
  for (const service of running.slice(1)) logger.info({ target: service.name, url: service.url }, 'internal service health and metrics');
}

let stopping = false;
async function stop(signal: string): Promise<void> {
  if (stopping) return;
  stopping = true;
  logger.info({ signal }, 'shutting down');
  for (const service of running.reverse()) await service.stop().catch((error) => logger.error({ err: error }, 'stop failed'));
  await bus?.close().catch((error) => logger.error({ err: error }, 'bus close failed'));
  await embeddedPostgres?.stop().catch((error) => logger.error({ err: error }, 'PostgreSQL stop failed'));
  await tracing.shutdown().catch((error) => logger.error({ err: error }, 'trace export failed'));
  process.exit(0);
}

process.once('SIGTERM', () => void stop('SIGTERM'));
process.once('SIGINT', () => void stop('SIGINT'));
start().catch(async (error) => {
  logger.fatal({ err: error }, 'start failed');
  await stop('start failure');
  process.exit(1);
});
