/**
 * `@runline/db`: storage for Runline services on PostgreSQL with TypeORM.
 *
 * - Each service owns ONE schema: `createServiceDataSource` pins every connection to it
 *   (`search_path`) and keeps its migrations table there. Schema changes happen only in the
 *   explicit `migrate` step; services call `assertMigrated` at start and refuse to run on an
 *   older schema. `synchronize` is never on.
 * - Events leave a service only through its transactional outbox: `TransactionRunner.run`
 *   commits the state change and the emitted messages together, and `OutboxRelay` publishes
 *   them to the bus after COMMIT (the message id is the bus dedupe key), with a periodic sweep
 *   as the backstop for a crash between commit and publish.
 * - Consumers deduplicate with the `Inbox`, in the same transaction as their effect, so a
 *   redelivered message never has its effect twice.
 * - `GroupCommit` lets writes that arrive while others are in flight share one transaction.
 * - `startEmbeddedPostgres` runs a local server for development when `DATABASE_URL` is unset.
 *
 * Every service lists `CreateOutboxAndInbox1763700000000` first in its migrations.
 */
export { createServiceDataSource, handleConnectionCuts, type ServiceDataSourceOptions } from './service-data-source.js';
export { assertMigrated, migrate, pendingMigrations, SchemaNotMigratedError } from './migrate.js';
export { CreateOutboxAndInbox1763700000000 } from './migrations/1763700000000-create-outbox-and-inbox.js';
export { TransactionRunner, type OutboxNotifier, type TransactionContext } from './transaction-runner.js';
export { OutboxRelay, streamOfSubject, type OutboxRelayOptions } from './outbox-relay.js';
export { prometheusOutboxMetrics, type OutboxMetrics } from './outbox-metrics.js';
export type { OutboxRelayLogger } from './relay-logger.js';
export { Inbox } from './inbox.js';
export { GroupCommit, type BatchWriter } from './group-commit.js';
export { startEmbeddedPostgres, type EmbeddedPostgres, type EmbeddedPostgresOptions } from './embedded-postgres.js';
export { returningRows } from './returning-rows.js';
export { IndexInboxProcessedAt1763700000900 } from './migrations/1763700000900-index-inbox-processed-at.js';
export { DEFAULT_INBOX_RETENTION_MS, INBOX_PRUNE_BATCH, InboxPruner, type InboxPrunerLogger, type InboxPrunerOptions } from './inbox-pruner.js';
export { isTransientDatabaseError } from './transient-errors.js';
