/**
 * New runs, many per call: the state rows, first events, read models, idempotency keys and
 * outbox rows of a batch, written together. Two ways: in the caller's transaction
 * (`insertInvocations`, where the monthly quota is counted), or as one statement with no
 * transaction round trips (`insertInvocationsAtOnce`, the hot path).
 */
import type { EntityManager } from 'typeorm';
import type { TransactionContext, TransactionRunner } from '@runline/db';
import type { RunModeName, TargetType } from '../lifecycle/invocation-event.js';
import type { InvocationDocument } from '../lifecycle/invocation.projector.js';
import type { NewHistory, NewRunHistory } from '../lifecycle/run-history.js';
import type { FirstRecord } from '../lifecycle/run-lifecycle.js';
import { columns, columnsOf, eventRowOf, insertEvents, keyOf } from './sql-rows.js';

export interface IdempotencyKey {
  projectId: string;
  targetType: TargetType;
  mode: RunModeName;
  key: string;
}

/**
 * A run to record: the first record the lifecycle core gave, what the run is, and its history as
 * written (`withHistory`): stored events from sequence 1, their messages, the read model.
 */
export interface NewInvocation extends NewHistory, FirstRecord {
  history: NewRunHistory;
  targetType: TargetType;
  mode: RunModeName;
  maxAttempts: number;
  sealedPlan: string;
  idempotency: IdempotencyKey | null;
}

/** What became of one NewInvocation in a batch. */
export type InsertOutcome = { created: true; document: InvocationDocument } | { created: false; existingId: string };

/**
 * Records new invocations in one transaction. An idempotency key already taken (by an earlier
 * request, or by another request in this batch) is not an error: that item is not recorded and
 * comes back as `{ created: false, existingId }` so the caller answers with the earlier run.
 */
export async function insertInvocations(tx: TransactionContext, items: readonly NewInvocation[]): Promise<InsertOutcome[]> {
  const { manager } = tx;
  const winners = new Set<number>(items.keys());
  const keyed = [...items.entries()].filter(([, item]) => item.idempotency !== null);
  if (keyed.length > 0) {
    const inserted: Array<{ invocation_id: string }> = await manager.query(
      `INSERT INTO idempotency_keys (project_id, target_type, mode, key, invocation_id)
       SELECT * FROM unnest($1::uuid[], $2::text[], $3::text[], $4::text[], $5::uuid[])
       ON CONFLICT DO NOTHING RETURNING invocation_id`,
      columns(keyed.map(([, item]) => item), (item) => {
        const key = item.idempotency as IdempotencyKey;
        return [key.projectId, key.targetType, key.mode, key.key, item.id];
      }),
    );
    const insertedIds = new Set(inserted.map((row) => row.invocation_id));
    for (const [index, item] of keyed) if (!insertedIds.has(item.id)) winners.delete(index);
  }

  const created = [...winners].map((index) => items[index]!);
  const events = created.flatMap((item) => item.history.events);
  if (created.length > 0) {
    await manager.query(
      `INSERT INTO invocations (id, org_id, project_id, target_type, mode, status, attempt, max_attempts,
                                lease_owner, lease_expires_at, sequence, sealed_plan, created_at, waiting_job, updated_at)
       SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::text[], $5::text[], $6::text[], $7::int[],
                            $8::int[], $9::text[], $10::timestamptz[], $11::int[], $12::text[], $13::timestamptz[],
                            $14::text[], $15::timestamptz[])`,
      columns(created, stateRowOf),
    );
    await insertEvents(manager, events);
    await manager.query(
      `INSERT INTO invocation_views (id, org_id, project_id, started_by_token_id, target_type, document, sequence, created_at, updated_at)
       SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::uuid[], $5::text[], $6::jsonb[], $7::int[], $8::timestamptz[], $9::timestamptz[])`,
      columns(created, viewRowOf),
    );
    for (const item of created) for (const message of item.history.eventMessages) tx.emit(message);
    for (const item of created) for (const message of item.messages) tx.emit(message);
  }

  const losers = keyed.filter(([index]) => !winners.has(index)).map(([, item]) => item);
  return outcomesOf(manager, items, (index) => winners.has(index), losers);
}

/**
 * `insertInvocations` as ONE statement, with no transaction round trips: the hot path of
 * accepting runs. It applies only when no organization of the batch has a monthly quota (a
 * quota is counted under a lock in a transaction, `recordWithinQuota`): otherwise it writes
 * nothing and resolves with the organizations that have one. PostgreSQL runs the statement atomically, so the runs, their
 * events, read models, idempotency keys and outbox rows commit together or not at all.
 */
export async function insertInvocationsAtOnce(
  runner: TransactionRunner,
  items: readonly NewInvocation[],
): Promise<{ outcomes: InsertOutcome[] } | { quotaBound: string[] }> {
  const parameters: unknown[] = [];
  const p = (value: unknown): string => {
    parameters.push(value);
    return `$${parameters.length}`;
  };
  const events = items.flatMap((item) => item.history.events);
  // What the transaction path emits, in the same order: every event, then the runs' own messages.
  const extras = items.flatMap((item) => item.messages.map((message) => ({ message, owner: item.id })));
  const messages = [...items.flatMap((item) => item.history.eventMessages), ...extras.map((extra) => extra.message)];
  const owners = [...events.map((event) => event.invocationId), ...extras.map((extra) => extra.owner)];
  const keyed = items.filter((item) => item.idempotency !== null);
  const list = (values: unknown[][], types: string[]) => values.map((column, index) => `${p(column)}::${types[index]}[]`).join(', ');
  const orgs = p([...new Set(items.map((item) => item.orgId))]);
  const keyColumns = columnsOf(keyed, 5, (item) => {
    const key = item.idempotency as IdempotencyKey;
    return [key.projectId, key.targetType, key.mode, key.key, item.id];
  });
  const runColumns = columnsOf(items, 16, (item) => [...stateRowOf(item), item.idempotency !== null]);
  const eventColumns = columnsOf(events, 6, eventRowOf);
  const viewColumns = columnsOf(items, 9, viewRowOf);
  const keysSql = list(keyColumns, ['uuid', 'text', 'text', 'text', 'uuid']);
  const runsSql = list(runColumns, ['uuid', 'uuid', 'uuid', 'text', 'text', 'text', 'int', 'int', 'text', 'timestamptz', 'int', 'text', 'timestamptz', 'text', 'timestamptz', 'bool']);
  const eventsSql = list(eventColumns, ['uuid', 'int', 'uuid', 'text', 'timestamptz', 'jsonb']);
  const viewsSql = list(viewColumns, ['uuid', 'uuid', 'uuid', 'uuid', 'text', 'jsonb', 'int', 'timestamptz', 'timestamptz']);
  const published = runner.outboxInsertOwned(messages, owners, 'runs', parameters.length + 1);
  parameters.push(...published.parameters);

  const [row] = await runner.runStatement<Array<{ quota_bound: string[]; created: string[] }>>(
    `WITH quota_bound AS (
       SELECT org_id FROM organization_copies WHERE org_id = ANY(${orgs}::uuid[]) AND monthly_quota IS NOT NULL
     ), keys AS (
       INSERT INTO idempotency_keys (project_id, target_type, mode, key, invocation_id)
       SELECT k.* FROM unnest(${keysSql}) AS k WHERE NOT EXISTS (SELECT 1 FROM quota_bound)
       ON CONFLICT DO NOTHING RETURNING invocation_id
     ), runs AS (
       INSERT INTO invocations (id, org_id, project_id, target_type, mode, status, attempt, max_attempts,
                                lease_owner, lease_expires_at, sequence, sealed_plan, created_at, waiting_job, updated_at)
       SELECT u.id, u.org_id, u.project_id, u.target_type, u.mode, u.status, u.attempt, u.max_attempts, u.lease_owner,
              u.lease_expires_at, u.sequence, u.sealed_plan, u.created_at, u.waiting_job, u.updated_at
         FROM unnest(${runsSql}) AS u(id, org_id, project_id, target_type, mode, status, attempt, max_attempts, lease_owner,
                                      lease_expires_at, sequence, sealed_plan, created_at, waiting_job, updated_at, keyed)
        WHERE NOT EXISTS (SELECT 1 FROM quota_bound) AND (NOT u.keyed OR u.id IN (SELECT invocation_id FROM keys))
       RETURNING id
     ), appended AS (
       INSERT INTO invocation_events (invocation_id, sequence, id, type, occurred_at, data)
       SELECT e.* FROM unnest(${eventsSql}) AS e(invocation_id, sequence, id, type, occurred_at, data)
        WHERE e.invocation_id IN (SELECT id FROM runs)
     ), viewed AS (
       INSERT INTO invocation_views (id, org_id, project_id, started_by_token_id, target_type, document, sequence, created_at, updated_at)
       SELECT u.* FROM unnest(${viewsSql}) AS u(id, org_id, project_id, started_by_token_id, target_type, document, sequence, created_at, updated_at)
        WHERE u.id IN (SELECT id FROM runs)
     ), published AS (${published.sql})
     SELECT ARRAY(SELECT org_id::text FROM quota_bound) AS quota_bound, ARRAY(SELECT id::text FROM runs) AS created`,
    parameters,
    ([result]) => {
      if (!result || result.quota_bound.length > 0) return [];
      const created = new Set(result.created);
      return messages.filter((_message, index) => created.has(owners[index]!));
    },
  );
  if (!row) throw new Error('insertInvocationsAtOnce: the statement returned no row');
  if (row.quota_bound.length > 0) return { quotaBound: row.quota_bound };
  const created = new Set(row.created);
  const losers = keyed.filter((item) => !created.has(item.id));
  return { outcomes: await outcomesOf(runner.dataSource.manager, items, (index) => created.has(items[index]!.id), losers) };
}

/** The outcome of each item of a batch: created with its document, or the run that holds its key. */
async function outcomesOf(
  manager: EntityManager,
  items: readonly NewInvocation[],
  isCreated: (index: number) => boolean,
  losers: NewInvocation[],
): Promise<InsertOutcome[]> {
  const existing = new Map<string, string>();
  if (losers.length > 0) {
    const rows: Array<{ project_id: string; target_type: string; mode: string; key: string; invocation_id: string }> = await manager.query(
      `SELECT k.project_id, k.target_type, k.mode, k.key, k.invocation_id
         FROM idempotency_keys k
         JOIN unnest($1::uuid[], $2::text[], $3::text[], $4::text[]) AS u(project_id, target_type, mode, key)
           ON k.project_id = u.project_id AND k.target_type = u.target_type AND k.mode = u.mode AND k.key = u.key`,
      columns(losers, (item) => {
        const key = item.idempotency as IdempotencyKey;
        return [key.projectId, key.targetType, key.mode, key.key];
      }),
    );
    for (const row of rows) existing.set(keyOf(row.project_id, row.target_type, row.mode, row.key), row.invocation_id);
  }

  return items.map((item, index) => {
    if (isCreated(index)) return { created: true, document: item.history.document };
    const key = item.idempotency as IdempotencyKey;
    const existingId = existing.get(keyOf(key.projectId, key.targetType, key.mode, key.key));
    if (!existingId) throw new Error(`idempotency key of ${item.id} was taken but its run is not found`);
    return { created: false, existingId };
  });
}

/** A new run's `invocations` row: id … waiting_job, updated_at (the order of the INSERTs' columns). */
function stateRowOf(item: NewInvocation): unknown[] {
  return [
    item.id,
    item.orgId,
    item.projectId,
    item.targetType,
    item.mode,
    item.status,
    item.attempt,
    item.maxAttempts,
    item.lease?.owner ?? null,
    item.lease?.expiresAt ?? null,
    item.events.length,
    item.sealedPlan,
    item.occurredAt,
    item.waitingJob,
    item.history.updatedAt,
  ];
}

/** A new run's `invocation_views` row: id … created_at, updated_at. */
function viewRowOf(item: NewInvocation): unknown[] {
  const { history } = item;
  return [item.id, item.orgId, item.projectId, history.startedByTokenId, item.targetType, JSON.stringify(history.document), item.events.length, item.occurredAt, history.updatedAt];
}
