import type { EntityManager } from 'typeorm';
import type { BusMessage } from '@runline/bus';
import { qualified } from './service-schema.js';

/** One unpublished outbox row, as the relay reads it. */
export interface OutboxRow {
  id: string;
  subject: string;
  data: Uint8Array;
  headers: Record<string, string>;
}

// Four parameters per row; Postgres allows 65 535 per statement.
const INSERT_CHUNK = 1000;

/** SQL and parameters that insert `messages` into the outbox, in emit order (sequence order). */
export function outboxInsertStatements(schema: string, messages: BusMessage[]): Array<{ sql: string; parameters: unknown[] }> {
  const statements: Array<{ sql: string; parameters: unknown[] }> = [];
  for (let start = 0; start < messages.length; start += INSERT_CHUNK) {
    const chunk = messages.slice(start, start + INSERT_CHUNK);
    const parameters: unknown[] = [];
    const rows = chunk.map((message, index) => {
      parameters.push(message.id, message.subject, toBuffer(message.data), JSON.stringify(message.headers ?? {}));
      const p = index * 4;
      return `($${p + 1}, $${p + 2}, $${p + 3}, $${p + 4}::jsonb)`;
    });
    statements.push({
      sql: `INSERT INTO ${qualified(schema, 'outbox')} (id, subject, data, headers) VALUES ${rows.join(', ')}`,
      parameters,
    });
  }
  return statements;
}

/**
 * A data-modifying CTE body that inserts `messages` into the outbox, in emit order, once for
 * each row `guard` (a CTE of the same statement) yields: none when the statement's state change
 * did not apply. Parameters are numbered from `firstParameter`.
 */
export function outboxInsertAfter(schema: string, messages: BusMessage[], guard: string, firstParameter: number): { sql: string; parameters: unknown[] } {
  const p = firstParameter;
  return {
    sql: `INSERT INTO ${qualified(schema, 'outbox')} (id, subject, data, headers)
          SELECT m.id, m.subject, m.data, m.headers
            FROM ${guard} CROSS JOIN unnest($${p}::text[], $${p + 1}::text[], $${p + 2}::bytea[], $${p + 3}::jsonb[])
                 WITH ORDINALITY AS m(id, subject, data, headers, n)
           ORDER BY m.n`,
    parameters: outboxColumns(messages),
  };
}

/**
 * Like `outboxInsertAfter` for a statement that writes several things at once: each message
 * belongs to an owner (`owners[i]` for `messages[i]`), and is inserted only if its owner is
 * among the `id` values the CTE `ownersCte` yields.
 */
export function outboxInsertOwned(
  schema: string,
  messages: BusMessage[],
  owners: string[],
  ownersCte: string,
  firstParameter: number,
): { sql: string; parameters: unknown[] } {
  if (owners.length !== messages.length) throw new Error('outboxInsertOwned needs one owner per message');
  const p = firstParameter;
  return {
    sql: `INSERT INTO ${qualified(schema, 'outbox')} (id, subject, data, headers)
          SELECT m.id, m.subject, m.data, m.headers
            FROM unnest($${p}::text[], $${p + 1}::text[], $${p + 2}::bytea[], $${p + 3}::jsonb[], $${p + 4}::text[])
                 WITH ORDINALITY AS m(id, subject, data, headers, owner, n)
           WHERE m.owner IN (SELECT id::text FROM ${ownersCte})
           ORDER BY m.n`,
    parameters: [...outboxColumns(messages), owners],
  };
}

export async function insertOutboxMessages(manager: EntityManager, schema: string, messages: BusMessage[]): Promise<void> {
  for (const { sql, parameters } of outboxInsertStatements(schema, messages)) {
    await manager.query(sql, parameters);
  }
}

/**
 * Locks and returns up to `limit` unpublished rows in sequence order. Rows another relay holds
 * are skipped, so two relays never hold (and publish) the same row at the same time. The locks
 * last until the caller's transaction ends. `minAgeMs` leaves younger rows alone unless a
 * publish of theirs already failed; `skip` names rows the caller is publishing by other means.
 */
export async function claimUnpublished(
  manager: EntityManager,
  schema: string,
  limit: number,
  { minAgeMs = 0, skip = [] }: { minAgeMs?: number; skip?: string[] } = {},
): Promise<OutboxRow[]> {
  const rows = await manager.query<Array<{ id: string; subject: string; data: Buffer; headers: Record<string, string> | null }>>(
    `SELECT id, subject, data, headers FROM ${qualified(schema, 'outbox')}
      WHERE published_at IS NULL
        AND ($2::int = 0 OR attempts > 0 OR created_at < now() - $2::int * interval '1 millisecond')
        AND NOT (id = ANY($3::text[]))
      ORDER BY sequence
      LIMIT $1
      FOR UPDATE SKIP LOCKED`,
    [limit, Math.floor(minAgeMs), skip],
  );
  return rows.map((row) => ({ id: row.id, subject: row.subject, data: row.data, headers: row.headers ?? {} }));
}

export async function markPublished(manager: EntityManager, schema: string, ids: string[]): Promise<void> {
  if (ids.length === 0) return;
  await manager.query(`UPDATE ${qualified(schema, 'outbox')} SET published_at = now() WHERE id = ANY($1::text[])`, [ids]);
}

export async function recordPublishFailure(manager: EntityManager, schema: string, id: string, error: string): Promise<void> {
  await manager.query(
    `UPDATE ${qualified(schema, 'outbox')} SET attempts = attempts + 1, last_error = $2 WHERE id = $1`,
    [id, error.slice(0, 1000)],
  );
}

/** Deletes up to `limit` rows published more than `olderThanMs` ago; returns how many. */
export async function prunePublished(manager: EntityManager, schema: string, olderThanMs: number, limit: number): Promise<number> {
  const table = qualified(schema, 'outbox');
  const [{ deleted }] = await manager.query<Array<{ deleted: number }>>(
    `WITH doomed AS (
       DELETE FROM ${table} WHERE id IN (
         SELECT id FROM ${table}
          WHERE published_at IS NOT NULL AND published_at < now() - $1::bigint * interval '1 millisecond'
          ORDER BY published_at
          LIMIT $2)
       RETURNING 1)
     SELECT count(*)::int AS deleted FROM doomed`,
    [Math.floor(olderThanMs), limit],
  );
  return deleted;
}

/** id, subject, data and headers of `messages`, one array per column (for `unnest`). */
function outboxColumns(messages: BusMessage[]): unknown[][] {
  return [
    messages.map((message) => message.id),
    messages.map((message) => message.subject),
    messages.map((message) => toBuffer(message.data)),
    messages.map((message) => JSON.stringify(message.headers ?? {})),
  ];
}

function toBuffer(data: Uint8Array): Buffer {
  return Buffer.isBuffer(data) ? data : Buffer.from(data.buffer, data.byteOffset, data.byteLength);
}
