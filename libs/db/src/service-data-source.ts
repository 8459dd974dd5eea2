import { DataSource, type LoggerOptions, type MixedList } from 'typeorm';
import { assertSchemaName } from './service-schema.js';

export interface ServiceDataSourceOptions {
  /** `postgres://user:password@host:port/database`. */
  url: string;
  /** The service's own schema; its tables and its `migrations` table live there. */
  schema: string;
  /** Migration classes, `CreateOutboxAndInbox1763700000000` first. */
  // eslint-disable-next-line @typescript-eslint/no-unsafe-function-type
  migrations: MixedList<Function>;
  /** Connections in the pool. Default 10. */
  poolSize?: number;
  /** TypeORM query logging. Default off. */
  logging?: LoggerOptions;
}

/**
 * A TypeORM data source for one service: every connection works in `schema` (its `search_path`
 * is that schema alone, so raw SQL cannot reach another service's tables by accident), the
 * migrations table is `<schema>.migrations`, and nothing changes the schema implicitly:
 * no `synchronize`, no migrations at initialisation, no extension installs.
 */
export function createServiceDataSource(options: ServiceDataSourceOptions): DataSource {
  assertSchemaName(options.schema);
  return new DataSource({
    type: 'postgres',
    url: options.url,
    schema: options.schema,
    applicationName: `runline-${options.schema}`,
    // No entity classes: every service reads and writes its tables with SQL in its repositories.
    entities: [],
    migrations: options.migrations,
    migrationsTableName: 'migrations',
    migrationsTransactionMode: 'all',
    migrationsRun: false,
    synchronize: false,
    dropSchema: false,
    // Extensions are database-wide objects; a service must not create them as a side effect of
    // connecting. gen_random_uuid() is built into PostgreSQL 13+, so uuid columns need none.
    installExtensions: false,
    uuidExtension: 'pgcrypto',
    poolSize: options.poolSize ?? 10,
    logging: options.logging ?? false,
    // Set at connection start-up, so it also holds for connections TypeORM opens later.
    extra: { options: `-c search_path=${options.schema}` },
  });
}

/**
 * Keeps a connection cut from outside (a restarted or failing-over server, an administrator's
 * `pg_terminate_backend`) from crashing the process. node-postgres reports the cut on the
 * client; an idle pooled client has the pool's listener, but a client checked out between two
 * queries has none, and an `error` event without a listener is thrown. With this listener the
 * cut is logged here and reaches the code as the next query's rejection, which the retries of
 * transient errors (`retryTransient` in @runline/runtime) handle. Call it after `initialize()`.
 */
export function handleConnectionCuts(dataSource: DataSource, onCut: (error: Error) => void): void {
  const pool = (dataSource.driver as unknown as { master?: PgPoolLike }).master;
  if (!pool) return;
  const guard = (client: PgClientLike) => {
    if (!client.listeners('error').includes(onCut)) client.on('error', onCut);
  };
  pool.on('connect', guard);
  for (const client of pool._clients ?? []) guard(client);
}

interface PgClientLike {
  on(event: 'error', listener: (error: Error) => void): unknown;
  listeners(event: 'error'): unknown[];
}

interface PgPoolLike {
  on(event: 'connect', listener: (client: PgClientLike) => void): unknown;
  _clients?: PgClientLike[];
}
