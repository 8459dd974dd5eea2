import { Module, type INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { LogController } from 'fastify';
import type { AddressInfo } from 'node:net';
import { BusServer, type Bus } from '@runline/bus';
import { envelopeCodec, STREAMS } from '@runline/contracts';
import { assertMigrated, createServiceDataSource, handleConnectionCuts, InboxPruner, migrate, OutboxRelay, prometheusOutboxMetrics, TransactionRunner } from '@runline/db';
import { createLogger, createMetricsRegistry, instrumentHttp, NestPinoLogger, requestIdFor, tracedServerFactory, type Logger } from '@runline/observability';
import { RuntimeModule } from './runtime.module.js';
import type { ServiceDefinition } from './service-definition.js';

export interface ServiceStartOptions {
  databaseUrl: string;
  bus: Bus;
  /** 0 picks a free port (tests, and the internal services of embedded mode). */
  httpPort: number;
  httpHost?: string;
  environment?: NodeJS.ProcessEnv;
  logger?: Logger;
}

export interface RunningService {
  name: string;
  /** Base URL of the service's HTTP server (`http://127.0.0.1:3000`). */
  url: string;
  app: INestApplication;
  /** Stops HTTP and bus handlers, flushes the outbox relay, closes the database. Not the bus. */
  stop(): Promise<void>;
}

/** Runs the explicit migration step for each service, each in its own schema. */
export async function migrateServices(definitions: ServiceDefinition[], databaseUrl: string, logger?: Logger): Promise<void> {
  for (const definition of definitions) {
    const dataSource = createServiceDataSource({
      url: databaseUrl,
      schema: definition.schema,
      migrations: definition.migrations,
      poolSize: 1,
    });
    await dataSource.initialize();
    try {
      const ran = await migrate(dataSource);
      logger?.info({ schema: definition.schema, migrations: ran }, ran.length ? 'migrations applied' : 'schema up to date');
    } finally {
      await dataSource.destroy();
    }
  }
}

/** Starts one service: database, outbox relay, bus handlers, HTTP (health, metrics, routes). */
export async function startService(definition: ServiceDefinition, options: ServiceStartOptions): Promise<RunningService> {
  const logger = options.logger ?? createLogger({ service: definition.name });
  const dataSource = createServiceDataSource({
    url: options.databaseUrl,
    schema: definition.schema,
    migrations: definition.migrations,
  });
  await dataSource.initialize();
  handleConnectionCuts(dataSource, (error) => logger.warn({ err: error }, 'database connection cut; the next query on it fails and is retried'));
  let app: NestFastifyApplication | undefined;
  const registry = createMetricsRegistry(definition.name);
  const relay = new OutboxRelay(dataSource, options.bus, { logger, metrics: prometheusOutboxMetrics(registry, dataSource) });
  const inboxPruner = new InboxPruner(dataSource, { retentionMs: inboxRetentionMs(options.environment ?? process.env), logger });
  try {
    await assertMigrated(dataSource);
    await options.bus.ensureStreams(STREAMS);

    @Module({
      imports: [
        RuntimeModule.forService({
          service: definition.name,
          dataSource,
          bus: options.bus,
          transactions: new TransactionRunner(dataSource, relay),
          logger,
          registry,
          environment: options.environment ?? process.env,
        }),
        definition.module,
      ],
    })
    class ServiceRootModule {}

    // Fastify, not Express: the gateway's pipeline budget (a share of a bare Express hello
    // route) cannot be met on Express; Nest on Fastify answers a validated JSON POST faster
    // than Express answers "hello" on this hardware (bench/README.md).
    // Requests are logged by our own instrumentation (instrumentHttp), not by Fastify.
    const adapter = new FastifyAdapter({
      genReqId: requestIdFor,
      requestIdHeader: false,
      logController: new LogController({ disableRequestLogging: true }),
      logger: false,
      // Each request in a span that continues the caller's traceparent (a no-op without tracing).
      serverFactory: tracedServerFactory(definition.name),
    });
    app = await NestFactory.create<NestFastifyApplication>(ServiceRootModule, adapter, {
      logger: new NestPinoLogger(logger.child({ component: 'nest' })),
      abortOnError: false,
      // Services that take bodies register their own parser, with their own limits and errors.
      bodyParser: false,
    });
    instrumentHttp(app.getHttpAdapter().getInstance(), { registry, logger: logger.child({ component: 'http' }) });
    definition.configureHttp?.(app);
    app.connectMicroservice(
      {
        strategy: new BusServer({
          bus: options.bus,
          service: definition.name,
          streams: STREAMS,
          eventCodec: envelopeCodec,
          subscription: { ackWaitMs: ackWaitMs(options.environment ?? process.env) },
        }),
      },
      { inheritAppConfig: true },
    );
    // Init hooks first: Nest runs them only at listen(), after the microservices have
    // subscribed, and a replica starting under load (a rolling restart) then handled requests
    // with providers not yet initialized. Subscribed after init, it takes none before it is ready.
    await app.init();
    await app.startAllMicroservices();
    relay.start();
    inboxPruner.start();
    await app.listen(options.httpPort, options.httpHost ?? '127.0.0.1');
  } catch (error) {
    await app?.close().catch(() => undefined);
    await inboxPruner.stop().catch(() => undefined);
    await relay.stop().catch(() => undefined);
    await dataSource.destroy().catch(() => undefined);
    throw error;
  }

  const started = app;
  const address = started.getHttpServer().address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  logger.info({ port: address.port }, `${definition.name} started`);
  return {
    name: definition.name,
    url: `http://${host === '0.0.0.0' || host === '[::]' ? '127.0.0.1' : host}:${address.port}`,
    app: started,
    async stop() {
      await started.close();
      await inboxPruner.stop();
      await relay.stop();
      await dataSource.destroy();
      logger.info(`${definition.name} stopped`);
    },
  };
}

/**
 * How long a delivered event or command may stay unacknowledged before it is redelivered to
 * another replica (`BUS_ACK_WAIT_MS`, default 30 s): the time a crashed replica's messages
 * wait. Handlers here acknowledge within seconds, so it can be short.
 */
function ackWaitMs(environment: NodeJS.ProcessEnv): number {
  const raw = environment.BUS_ACK_WAIT_MS;
  if (raw === undefined || raw === '') return 30_000;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 500 || value > 3_600_000) throw new Error('BUS_ACK_WAIT_MS must be an integer from 500 to 3600000');
  return value;
}

const DAY_MS = 86_400_000;

/**
 * INBOX_RETENTION_DAYS (default 30): how long each service keeps the ids of the messages it
 * processed (see InboxPruner for why 30 days is past any redelivery).
 */
export function inboxRetentionMs(env: NodeJS.ProcessEnv): number | undefined {
  const text = env.INBOX_RETENTION_DAYS;
  if (text === undefined || text === '') return undefined;
  const days = Number(text);
  if (!Number.isInteger(days) || days < 1 || days > 3650) throw new Error(`INBOX_RETENTION_DAYS must be a whole number of days from 1 to 3650, got "${text}"`);
  return days * DAY_MS;
}
