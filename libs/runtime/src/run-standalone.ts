import { IsIn, IsNotEmpty, IsOptional, IsString } from 'class-validator';
import { JetStreamBus } from '@runline/bus';
import { createLogger, startTracing } from '@runline/observability';
import { IsBusPrefix, IsCidrList, IsNatsUrl, IsPort, IsPostgresUrl, IsStreamReplicas, loadConfig } from './config.js';
import type { ServiceDefinition } from './service-definition.js';
import { migrateServices, startService } from './start-service.js';

/** The environment of a service running alone, as Kubernetes runs it: real NATS and Postgres. */
class StandaloneConfig {
  @IsString()
  @IsPostgresUrl()
  DATABASE_URL!: string;

  /** One server, or the nodes of a cluster comma-separated. */
  @IsString()
  @IsNatsUrl()
  NATS_URL!: string;

  /** Prepended to every subject and stream: several deployments can share one NATS. */
  @IsOptional()
  @IsBusPrefix()
  BUS_PREFIX?: string;

  /** Replicas of every JetStream stream (consumers follow), applied on create and at start when changed. */
  @IsStreamReplicas()
  BUS_STREAM_REPLICAS: number = 1;

  @IsPort()
  PORT: number = 3000;

  @IsString()
  @IsNotEmpty()
  HOST: string = '0.0.0.0';

  /** Ranges the outbound guard lets requests reach (callbacks, polls, http nodes). */
  @IsOptional()
  @IsCidrList()
  OUTBOUND_ALLOWED_CIDRS?: string;

  /** `true` runs the migration step before serving (otherwise run `main.js migrate` first). */
  @IsOptional()
  @IsIn(['true', 'false'])
  RUN_MIGRATIONS?: string;
}

/**
 * Entry point of one service as its own process. `node main.js migrate` applies the service's
 * migrations and exits; `node main.js` serves until SIGTERM, then drains and exits.
 */
export async function runStandalone(definition: ServiceDefinition, argv = process.argv.slice(2)): Promise<void> {
  const logger = createLogger({ service: definition.name });
  let config: StandaloneConfig;
  try {
    config = loadConfig(StandaloneConfig);
  } catch (error) {
    logger.fatal((error as Error).message);
    process.exit(1);
  }

  if (argv[0] === 'migrate' || config.RUN_MIGRATIONS === 'true') {
    await migrateServices([definition], config.DATABASE_URL, logger);
    if (argv[0] === 'migrate') return;
  }

  // Before the bus and the services, so everything they do can be traced.
  const tracing = startTracing({ serviceName: definition.name });
  const bus = await JetStreamBus.connect({
    url: config.NATS_URL,
    prefix: config.BUS_PREFIX ?? '',
    name: definition.name,
    streamReplicas: config.BUS_STREAM_REPLICAS,
    logger,
  });
  let service: Awaited<ReturnType<typeof startService>>;
  try {
    service = await startService(definition, {
      databaseUrl: config.DATABASE_URL,
      bus,
      httpPort: config.PORT,
      httpHost: config.HOST,
      logger,
    });
  } catch (error) {
    logger.fatal({ err: error }, `${definition.name} could not start: ${(error as Error).message}`);
    await bus.close().catch(() => undefined);
    process.exit(1);
  }

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    try {
      await service.stop();
      await bus.close();
      await tracing.shutdown();
      process.exit(0);
    } catch (error) {
      logger.error({ err: error }, 'unclean shutdown');
      process.exit(1);
    }
  };
  process.once('SIGTERM', () => void shutdown('SIGTERM'));
  process.once('SIGINT', () => void shutdown('SIGINT'));
}
