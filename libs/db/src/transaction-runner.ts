import { createHash } from 'node:crypto';
import type { DataSource, EntityManager } from 'typeorm';
import type { BusMessage } from '@runline/bus';
import { insertOutboxMessages, outboxInsertAfter, outboxInsertOwned } from './outbox.repository.js';
import { serviceSchemaOf } from './service-schema.js';

/** What a unit of work gets: the transaction's entity manager and a way to emit messages. */
export interface TransactionContext {
  /** Runs every query inside the transaction. */
  manager: EntityManager;
  /**
   * Queues a message for the outbox. It is written in the same transaction as the state
   * change and published only after COMMIT; if the transaction rolls back, it never leaves.
   * `message.id` must be unique (it is the outbox key and the bus dedupe key).
   */
  emit(message: BusMessage): void;
}

/** Whatever publishes the outbox after a commit; `OutboxRelay` in a service. */
export interface OutboxNotifier {
  /** A commit wrote `committed` (in emit order) to the outbox. */
  notify(committed?: readonly BusMessage[]): void;
}

/**
 * Runs units of work with the transactional outbox: the state change and the outbox rows for
 * every emitted message commit together, and the relay is woken after COMMIT so the messages
 * go out right away. Nothing is published inside the transaction.
 *
 * Each `run` is its own transaction; calling `run` inside `run` opens a second, independent one.
 */
export class TransactionRunner {
  private readonly schema: string;
  /** SQL text → prepared statement name. The texts are the program's own, so the map stays small. */
  private readonly statementNames = new Map<string, string>();

  constructor(
    readonly dataSource: DataSource,
    private readonly relay: OutboxNotifier,
  ) {
    this.schema = serviceSchemaOf(dataSource);
  }

  async run<T>(fn: (tx: TransactionContext) => Promise<T>): Promise<T> {
    const messages: BusMessage[] = [];
    const ids = new Set<string>();
    let open = true;
    const result = await this.dataSource.transaction(async (manager) => {
      const tx: TransactionContext = {
        manager,
        emit: (message) => {
          if (!open) throw new Error(`emit(${message.id}) after the transaction ended`);
          assertMessage(message);
          if (ids.has(message.id)) throw new Error(`message ${message.id} emitted twice in one transaction`);
          ids.add(message.id);
          messages.push(message);
        },
      };
      try {
        const value = await fn(tx);
        await insertOutboxMessages(manager, this.schema, messages);
        return value;
      } finally {
        open = false;
      }
    });
    if (messages.length > 0) this.relay.notify(messages);
    return result;
  }

  /**
   * For a state change that is ONE statement (a CTE): the part that writes `messages` to the
   * outbox when the CTE named `guard` yields a row, with its parameters numbered from
   * `firstParameter`. Run the whole statement with `runStatement`.
   */
  outboxInsert(messages: BusMessage[], guard: string, firstParameter: number): { sql: string; parameters: unknown[] } {
    assertMessages(messages);
    return outboxInsertAfter(this.schema, messages, guard, firstParameter);
  }

  /** `outboxInsert` where `messages[i]` is written only if `owners[i]` is an `id` of the CTE `ownersCte`. */
  outboxInsertOwned(messages: BusMessage[], owners: string[], ownersCte: string, firstParameter: number): { sql: string; parameters: unknown[] } {
    assertMessages(messages);
    return outboxInsertOwned(this.schema, messages, owners, ownersCte, firstParameter);
  }

  /**
   * Runs one statement on its own: PostgreSQL commits it as a transaction by itself, which saves
   * the BEGIN and COMMIT round trips of `run` on hot paths. `outbox` says which messages the
   * statement wrote to the outbox (`outboxInsert`), given its result; the relay gets them after it.
   */
  async runStatement<T extends unknown[]>(sql: string, parameters: unknown[], outbox?: (rows: T) => readonly BusMessage[]): Promise<T> {
    const rows = await this.preparedQuery<T>(sql, parameters);
    const written = outbox?.(rows) ?? [];
    if (written.length > 0) this.relay.notify(written);
    return rows;
  }

  /**
   * A hot path's fixed SQL as a named (prepared) statement: PostgreSQL parses and plans it once
   * per connection instead of on every call. Resolves with the rows it returns.
   */
  private async preparedQuery<T extends unknown[]>(sql: string, parameters: unknown[]): Promise<T> {
    let name = this.statementNames.get(sql);
    if (name === undefined) {
      name = `rl_${createHash('sha1').update(sql).digest('hex').slice(0, 20)}`;
      this.statementNames.set(sql, name);
    }
    // The driver's pg pool: TypeORM's query() has no way to name a statement.
    const pool = (this.dataSource.driver as unknown as { master: PgPool }).master;
    const result = await pool.query({ name, text: sql, values: parameters });
    return result.rows as T;
  }
}

interface PgPool {
  query(config: { name: string; text: string; values: unknown[] }): Promise<{ rows: unknown[] }>;
}

function assertMessages(messages: readonly BusMessage[]): void {
  const ids = new Set<string>();
  for (const message of messages) {
    assertMessage(message);
    if (ids.has(message.id)) throw new Error(`message ${message.id} emitted twice in one statement`);
    ids.add(message.id);
  }
}

function assertMessage(message: BusMessage): void {
  if (typeof message.id !== 'string' || message.id.length === 0) throw new Error('emitted message needs a non-empty id');
  if (typeof message.subject !== 'string' || message.subject.length === 0) {
    throw new Error(`emitted message ${message.id} needs a subject`);
  }
  // isView, not instanceof: Buffers and Uint8Arrays from another realm (vm, Jest) qualify too.
  if (!ArrayBuffer.isView(message.data)) throw new Error(`emitted message ${message.id}: data must be a Uint8Array`);
}
