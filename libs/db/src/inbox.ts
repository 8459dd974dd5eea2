import type { DataSource, EntityManager } from 'typeorm';
import { qualified, serviceSchemaOf } from './service-schema.js';
import { TransactionRunner, type TransactionContext } from './transaction-runner.js';

/**
 * Records that `consumer` processed `messageId`, inside the caller's transaction, and tells
 * whether this is the first time: `true` means go ahead with the effect, `false` means it was
 * processed before (a redelivery) and the effect must be skipped.
 *
 * Call it FIRST in the transaction: the row it inserts also serialises concurrent deliveries of
 * one message (a second transaction waits for the first and then sees the row). If the
 * transaction rolls back, the record goes with it and a redelivery processes the message again.
 *
 * Inbox rows are kept indefinitely: a message may be redelivered or replayed from the stream
 * long after it was first processed.
 */
async function runOnce(manager: EntityManager, consumer: string, messageId: string): Promise<boolean> {
  if (!manager.queryRunner?.isTransactionActive) {
    throw new Error('Inbox.runOnce needs the EntityManager of an open transaction');
  }
  if (!consumer) throw new Error('Inbox.runOnce needs a consumer name');
  if (!messageId) throw new Error('Inbox.runOnce needs a message id');
  const table = qualified(serviceSchemaOf(manager.dataSource), 'inbox');
  const inserted = await manager.query<unknown[]>(
    `INSERT INTO ${table} (consumer, message_id) VALUES ($1, $2) ON CONFLICT DO NOTHING RETURNING 1`,
    [consumer, messageId],
  );
  return inserted.length === 1;
}

/**
 * `runOnce` and the effect in one transaction. With a `TransactionRunner` the effect may emit
 * messages (outbox); with a plain `DataSource` it gets the manager only. Resolves `true` if the
 * effect ran, `false` if the message had been processed already. If `fn` throws, nothing is
 * recorded and the error propagates (so the bus redelivers the message).
 */
function handleOnce(
  runner: TransactionRunner,
  consumer: string,
  messageId: string,
  fn: (tx: TransactionContext) => Promise<unknown>,
): Promise<boolean>;
function handleOnce(
  dataSource: DataSource,
  consumer: string,
  messageId: string,
  fn: (tx: { manager: EntityManager }) => Promise<unknown>,
): Promise<boolean>;
async function handleOnce(
  target: TransactionRunner | DataSource,
  consumer: string,
  messageId: string,
  fn: (tx: TransactionContext) => Promise<unknown>,
): Promise<boolean> {
  if (target instanceof TransactionRunner) {
    return target.run(async (tx) => {
      if (!(await runOnce(tx.manager, consumer, messageId))) return false;
      await fn(tx);
      return true;
    });
  }
  return target.transaction(async (manager) => {
    if (!(await runOnce(manager, consumer, messageId))) return false;
    await (fn as (tx: { manager: EntityManager }) => Promise<unknown>)({ manager });
    return true;
  });
}

/** Consumer-side deduplication: each (consumer, message id) has its effect at most once. */
export const Inbox = { runOnce, handleOnce } as const;
