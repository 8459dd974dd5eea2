import { MigrationExecutor, type DataSource } from 'typeorm';
import { serviceSchemaOf } from './service-schema.js';

// First key of the advisory lock that serialises migrations; the second is derived from the
// schema, so services migrating side by side do not wait for each other.
const MIGRATION_LOCK_SPACE = 727_400_001;

/** Thrown by `assertMigrated` when the schema lags behind the code. */
export class SchemaNotMigratedError extends Error {
  constructor(
    readonly schema: string,
    readonly pending: string[],
  ) {
    super(
      `schema "${schema}" is not migrated: ${pending.length} pending migration(s): ${pending.join(', ')}. ` +
        'Run the migration step before starting the service.',
    );
    this.name = 'SchemaNotMigratedError';
  }
}

/**
 * The explicit migration step. Creates the schema if it is missing, then runs every pending
 * migration, all in ONE transaction (all or nothing: a failed run leaves not even the schema
 * behind), and returns the names it ran, in order.
 *
 * Several processes may call it at once: a transaction-level advisory lock per schema makes
 * them take turns, and those that come later find nothing pending. Everything runs on a single
 * connection, so a data source with `poolSize: 1` is enough. Migrations cannot opt out of the
 * transaction (so no `CREATE INDEX CONCURRENTLY`).
 */
export async function migrate(dataSource: DataSource): Promise<string[]> {
  const schema = serviceSchemaOf(dataSource);
  const queryRunner = dataSource.createQueryRunner('master');
  await queryRunner.connect();
  try {
    await queryRunner.startTransaction();
    try {
      await queryRunner.query('SELECT pg_advisory_xact_lock($1, hashtext($2))', [MIGRATION_LOCK_SPACE, schema]);
      await queryRunner.query(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
      // The executor joins the open transaction instead of starting (and committing) its own.
      const executor = new MigrationExecutor(dataSource, queryRunner);
      executor.transaction = 'all';
      const ran = await executor.executePendingMigrations();
      await queryRunner.commitTransaction();
      return ran.map((migration) => migration.name);
    } catch (error) {
      if (queryRunner.isTransactionActive) await queryRunner.rollbackTransaction().catch(() => undefined);
      throw error;
    }
  } finally {
    await queryRunner.release();
  }
}

/** Names of the migrations the data source knows that have not run in its schema yet. */
export async function pendingMigrations(dataSource: DataSource): Promise<string[]> {
  serviceSchemaOf(dataSource);
  const pending = await new MigrationExecutor(dataSource).getPendingMigrations();
  return pending.map((migration) => migration.name);
}

/**
 * Refuses to go on (throws `SchemaNotMigratedError`) if any migration is pending. Services call
 * it at start so they never run against a schema older than their code. Read-only: it never
 * creates the schema or the migrations table.
 */
export async function assertMigrated(dataSource: DataSource): Promise<void> {
  const pending = await pendingMigrations(dataSource);
  if (pending.length > 0) throw new SchemaNotMigratedError(serviceSchemaOf(dataSource), pending);
}
