/**
 * The write side of runs in SQL: new invocations (many per transaction), transitions of one
 * run (event appended, state row and read model updated together), and the lookups the
 * handlers need. Every change appends to `invocation_events` and refolds the read model with
 * the projector, in the same transaction as the outbox rows that publish the events.
 */
import { randomUUID } from 'node:crypto';
import type { EntityManager } from 'typeorm';
import type { TransactionContext, TransactionRunner } from '@runline/db';
import type { InvocationEvent, InvocationEventData, RunModeName, TargetType } from '../events/invocation-event.js';
import { invocationEventMessage } from '../events/invocation-event.codec.js';
import { applyInvocationEvent, type InvocationDocument } from '../events/invocation.projector.js';
import { deliverCallbackMessage, type CallbackTarget } from './callback-request.js';

export type InvocationStatus = 'QUEUED' | 'RUNNING' | 'SUSPENDED' | 'SUCCEEDED' | 'FAILED' | 'TIMEOUT' | 'CANCELLED' | 'SCHEDULED';

export const FINAL_STATUSES: ReadonlySet<string> = new Set(['SUCCEEDED', 'FAILED', 'TIMEOUT', 'CANCELLED']);

export interface IdempotencyKey {
  projectId: string;
  targetType: TargetType;
  mode: RunModeName;
  key: string;
}

/** A run to record. `events` start its history (sequence 1, 2, …). */
export interface NewInvocation {
  id: string;
  orgId: string;
  projectId: string;
  targetType: TargetType;
  mode: RunModeName;
  status: InvocationStatus;
  attempt: number;
  maxAttempts: number;
  lease: { owner: string; expiresAt: Date } | null;
  /** The scheduler job a SCHEDULED run waits for; null otherwise. */
  waitingJob: string | null;
  sealedPlan: string;
  occurredAt: Date;
  events: InvocationEventData[];
  /** When each event happened, when they did not all happen at `occurredAt` (a run recorded once it ended). */
  eventTimes?: Date[];
  idempotency: IdempotencyKey | null;
  /** Extra messages to publish with it (the RunInvocation command of a queued run). */
  messages: Array<{ id: string; subject: string; data: Uint8Array }>;
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
  const { events, documents } = historiesOf(created);
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
      columns(created, (item) => viewRowOf(item, documents)),
    );
    for (const event of events) tx.emit(invocationEventMessage(event));
    for (const item of created) for (const message of item.messages) tx.emit(message);
  }

  const losers = keyed.filter(([index]) => !winners.has(index)).map(([, item]) => item);
  return outcomesOf(manager, items, (index) => winners.has(index), documents, losers);
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
  const { events, documents } = historiesOf(items);
  // What the transaction path emits, in the same order: every event, then the runs' own messages.
  const extras = items.flatMap((item) => item.messages.map((message) => ({ message, owner: item.id })));
  const messages = [...events.map((event) => invocationEventMessage(event)), ...extras.map((extra) => extra.message)];
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
  const viewColumns = columnsOf(items, 9, (item) => viewRowOf(item, documents));
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
  return { outcomes: await outcomesOf(runner.dataSource.manager, items, (index) => created.has(items[index]!.id), documents, losers) };
}

/** The outcome of each item of a batch: created with its document, or the run that holds its key. */
async function outcomesOf(
  manager: EntityManager,
  items: readonly NewInvocation[],
  isCreated: (index: number) => boolean,
  documents: Map<string, InvocationDocument>,
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
    if (isCreated(index)) return { created: true, document: documents.get(item.id) as InvocationDocument };
    const key = item.idempotency as IdempotencyKey;
    const existingId = existing.get(keyOf(key.projectId, key.targetType, key.mode, key.key));
    if (!existingId) throw new Error(`idempotency key of ${item.id} was taken but its run is not found`);
    return { created: false, existingId };
  });
}

/** The state row's change that goes with a transition. */
export interface StateChange {
  status: InvocationStatus;
  attempt?: number;
  lease?: { owner: string; expiresAt: Date } | null;
  runAfter?: Date | null;
  sealedResumeState?: string | null;
  /** The scheduler job the run waits for next (null: none). */
  waitingJob?: string | null;
  /**
   * Where the run calls back (`callbackTargetOf`). When the transition ends the run SUCCEEDED,
   * FAILED or TIMEOUT, its DeliverCallback is emitted in the same transaction; ignored otherwise.
   */
  callback?: CallbackTarget;
}

/** Which state the run must be in for the transition to apply (optimistic concurrency). */
export interface Expectation {
  status: InvocationStatus;
  /** The lease owner that must still hold a RUNNING run. */
  leaseOwner?: string;
  /** A QUEUED run must have been dispatched (not waiting for a retry's time). */
  dispatched?: boolean;
  /** The run must be waiting for this scheduler job (it fired, or is being cancelled/moved). */
  waitingJob?: string;
}

/**
 * Appends `events` to one run and applies `change`, only if the run is still as `expected`.
 * Returns the new document, or null when the run had moved on (another process finished or
 * interrupted it): nothing is written then.
 */
export async function transition(
  tx: TransactionContext,
  invocationId: string,
  expected: Expectation,
  change: StateChange,
  events: InvocationEventData[],
  messages: Array<{ id: string; subject: string; data: Uint8Array }> = [],
  at: Date = new Date(),
): Promise<InvocationDocument | null> {
  const { manager } = tx;
  const { set, where, parameters } = stateUpdate(invocationId, expected, change, events.length, at);
  const [row] = returnedRows<{ org_id: string; project_id: string; sequence: number }>(
    await manager.query(`UPDATE invocations SET ${set} WHERE ${where} RETURNING org_id, project_id, sequence`, parameters),
  );
  if (!row) return null;
  const views: Array<{ document: InvocationDocument }> = await manager.query('SELECT document FROM invocation_views WHERE id = $1', [invocationId]);
  let document = views[0]?.document ?? null;
  const firstSequence = row.sequence - events.length + 1;
  const stored = events.map((data, index) =>
    storedEvent({ id: invocationId, orgId: row.org_id, projectId: row.project_id }, firstSequence + index, at, data),
  );
  for (const event of stored) document = applyInvocationEvent(document, event);
  await insertEvents(manager, stored);
  await manager.query('UPDATE invocation_views SET document = $2, sequence = $3, updated_at = $4 WHERE id = $1', [
    invocationId,
    JSON.stringify(document),
    row.sequence,
    at,
  ]);
  for (const message of outgoing(stored, messages, change, document, { orgId: row.org_id, projectId: row.project_id })) tx.emit(message);
  return document;
}

/**
 * A run as this process last read or wrote it: enough to compute its next document without
 * reading it again. Valid while the run's `sequence` is unchanged.
 */
export interface KnownRun {
  id: string;
  orgId: string;
  projectId: string;
  sequence: number;
  document: InvocationDocument;
}

/**
 * `transition` for a caller that holds the run as it is (`known`): the new document is folded
 * in memory and the state row, events, read model and outbox rows are written by ONE statement,
 * guarded by the expectations and by `known.sequence`, with no transaction round trips (the
 * hot path: a run's claim and its end). If the run changed since, it falls back to `transition`
 * in a transaction, which decides on the row as it is now. Resolves like `transition`, with the
 * run as now known (null after the fallback) for the caller's next transition.
 */
export async function transitionKnown(
  runner: TransactionRunner,
  known: KnownRun,
  expected: Expectation,
  change: StateChange,
  events: InvocationEventData[],
  messages: Array<{ id: string; subject: string; data: Uint8Array }> = [],
  at: Date = new Date(),
): Promise<{ document: InvocationDocument; known: KnownRun | null } | null> {
  if (events.length === 0) throw new Error('transitionKnown needs at least one event');
  const stored = events.map((data, index) => storedEvent(known, known.sequence + index + 1, at, data));
  let document = known.document;
  for (const event of stored) document = applyInvocationEvent(document, event) as InvocationDocument;
  const outbox = outgoing(stored, messages, change, document, known);

  const { set, where, parameters } = stateUpdate(known.id, expected, change, events.length, at);
  parameters.push(known.sequence);
  const guarded = `${where} AND sequence = $${parameters.length}`;
  const eventColumns = columns(stored, eventRowOf);
  const firstEventParameter = parameters.length + 1;
  parameters.push(...eventColumns, JSON.stringify(document));
  const documentParameter = parameters.length;
  const published = runner.outboxInsert(outbox, 'moved', parameters.length + 1);
  parameters.push(...published.parameters);
  const e = (offset: number) => `$${firstEventParameter + offset}`;
  const rows = await runner.runStatement<Array<{ sequence: number }>>(
    `WITH moved AS (
       UPDATE invocations SET ${set} WHERE ${guarded} RETURNING sequence
     ), appended AS (
       INSERT INTO invocation_events (invocation_id, sequence, id, type, occurred_at, data)
       SELECT e.* FROM moved CROSS JOIN unnest(${e(0)}::uuid[], ${e(1)}::int[], ${e(2)}::uuid[], ${e(3)}::text[], ${e(4)}::timestamptz[], ${e(5)}::jsonb[]) AS e
     ), viewed AS (
       UPDATE invocation_views v SET document = $${documentParameter}, sequence = moved.sequence, updated_at = $5 FROM moved WHERE v.id = $1
     )${outbox.length > 0 ? `, published AS (${published.sql})` : ''}
     SELECT sequence FROM moved`,
    parameters,
    (written) => (written.length === 1 ? outbox : []),
  );
  if (rows.length === 1) return { document, known: { ...known, sequence: known.sequence + events.length, document } };
  const current = await runner.run((tx) => transition(tx, known.id, expected, change, events, messages, at));
  return current ? { document: current, known: null } : null;
}

/** The SET and WHERE of a transition's state row update; parameters $1..$5 are id, expected status, new status, event count, time. */
function stateUpdate(
  invocationId: string,
  expected: Expectation,
  change: StateChange,
  eventCount: number,
  at: Date,
): { set: string; where: string; parameters: unknown[] } {
  const set: string[] = ['status = $3', 'sequence = sequence + $4', 'updated_at = $5'];
  const parameters: unknown[] = [invocationId, expected.status, change.status, eventCount, at];
  const assign = (column: string, value: unknown) => {
    parameters.push(value);
    set.push(`${column} = $${parameters.length}`);
  };
  if (change.attempt !== undefined) assign('attempt', change.attempt);
  if (change.lease !== undefined) {
    assign('lease_owner', change.lease?.owner ?? null);
    assign('lease_expires_at', change.lease?.expiresAt ?? null);
  }
  if (change.runAfter !== undefined) assign('run_after', change.runAfter);
  if (change.sealedResumeState !== undefined) assign('sealed_resume_state', change.sealedResumeState);
  if (change.waitingJob !== undefined) assign('waiting_job', change.waitingJob);
  let where = 'id = $1 AND status = $2';
  if (expected.leaseOwner !== undefined) {
    parameters.push(expected.leaseOwner);
    where += ` AND lease_owner = $${parameters.length}`;
  }
  if (expected.dispatched) where += ' AND run_after IS NULL';
  if (expected.waitingJob !== undefined) {
    parameters.push(expected.waitingJob);
    where += ` AND waiting_job = $${parameters.length}`;
  }
  return { set: set.join(', '), where, parameters };
}

/** What a transition publishes: its events, the caller's messages, and the callback when the run ended. */
function outgoing(
  stored: InvocationEvent[],
  messages: Array<{ id: string; subject: string; data: Uint8Array }>,
  change: StateChange,
  document: InvocationDocument | null,
  owner: { orgId: string; projectId: string },
): Array<{ id: string; subject: string; data: Uint8Array }> {
  const out = [...stored.map((event) => invocationEventMessage(event)), ...messages];
  if (change.callback && document) {
    const callback = deliverCallbackMessage(document, owner, change.callback);
    if (callback) out.push(callback);
  }
  return out;
}

/** The state row of one run. */
export interface InvocationRow {
  id: string;
  orgId: string;
  projectId: string;
  targetType: TargetType;
  mode: RunModeName;
  status: InvocationStatus;
  attempt: number;
  maxAttempts: number;
  sealedPlan: string;
  sealedResumeState: string | null;
  waitingJob: string | null;
  /** The run with its sequence and document, when this process has them (`transitionKnown`). */
  known?: KnownRun | null;
}

export async function readInvocation(manager: EntityManager, id: string): Promise<InvocationRow | null> {
  const rows: Array<Record<string, unknown>> = await manager.query(
    `SELECT id, org_id, project_id, target_type, mode, status, attempt, max_attempts, sealed_plan, sealed_resume_state, waiting_job
       FROM invocations WHERE id = $1`,
    [id],
  );
  const row = rows[0];
  return row ? invocationRowOf(row) : null;
}

/** `readInvocation` with the run's sequence and document (`known`), in one read. */
export async function readKnownInvocation(manager: EntityManager, id: string): Promise<InvocationRow | null> {
  const rows: Array<Record<string, unknown>> = await manager.query(
    `SELECT i.id, i.org_id, i.project_id, i.target_type, i.mode, i.status, i.attempt, i.max_attempts, i.sealed_plan,
            i.sealed_resume_state, i.waiting_job, i.sequence, v.document
       FROM invocations i JOIN invocation_views v ON v.id = i.id WHERE i.id = $1`,
    [id],
  );
  const row = rows[0];
  if (!row) return null;
  const invocation = invocationRowOf(row);
  const known = { id: invocation.id, orgId: invocation.orgId, projectId: invocation.projectId, sequence: row.sequence as number, document: row.document as InvocationDocument };
  return { ...invocation, known };
}

function invocationRowOf(row: Record<string, unknown>): InvocationRow {
  return {
    id: row.id as string,
    orgId: row.org_id as string,
    projectId: row.project_id as string,
    targetType: row.target_type as TargetType,
    mode: row.mode as RunModeName,
    status: row.status as InvocationStatus,
    attempt: row.attempt as number,
    maxAttempts: row.max_attempts as number,
    sealedPlan: row.sealed_plan as string,
    sealedResumeState: (row.sealed_resume_state as string | null) ?? null,
    waitingJob: (row.waiting_job as string | null) ?? null,
  };
}

export async function readDocument(manager: EntityManager, id: string): Promise<InvocationDocument | null> {
  const rows: Array<{ document: InvocationDocument }> = await manager.query('SELECT document FROM invocation_views WHERE id = $1', [id]);
  return rows[0]?.document ?? null;
}

async function insertEvents(manager: EntityManager, events: InvocationEvent[]): Promise<void> {
  if (events.length === 0) return;
  await manager.query(
    `INSERT INTO invocation_events (invocation_id, sequence, id, type, occurred_at, data)
     SELECT * FROM unnest($1::uuid[], $2::int[], $3::uuid[], $4::text[], $5::timestamptz[], $6::jsonb[])`,
    columns(events, eventRowOf),
  );
}

function storedEvent(
  owner: { id: string; orgId: string; projectId: string },
  sequence: number,
  at: Date,
  data: InvocationEventData,
): InvocationEvent {
  return { id: randomUUID(), invocationId: owner.id, orgId: owner.orgId, projectId: owner.projectId, sequence, occurredAt: at.toISOString(), data };
}

/** The stored events of new runs (sequence 1, 2, …) and each run's read model folded from them. */
function historiesOf(items: readonly NewInvocation[]): { events: InvocationEvent[]; documents: Map<string, InvocationDocument> } {
  const events: InvocationEvent[] = [];
  const documents = new Map<string, InvocationDocument>();
  for (const item of items) {
    let document: InvocationDocument | null = null;
    item.events.forEach((data, index) => {
      const event = storedEvent(item, index + 1, eventTime(item, index), data);
      events.push(event);
      document = applyInvocationEvent(document, event);
    });
    if (document) documents.set(item.id, document);
  }
  return { events, documents };
}

/** An `invocation_events` row: invocation_id, sequence, id, type, occurred_at, data. */
function eventRowOf(event: InvocationEvent): unknown[] {
  return [event.invocationId, event.sequence, event.id, event.data.type, event.occurredAt, JSON.stringify(event.data)];
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
    lastEventTime(item),
  ];
}

/** A new run's `invocation_views` row: id … created_at, updated_at. */
function viewRowOf(item: NewInvocation, documents: Map<string, InvocationDocument>): unknown[] {
  const document = documents.get(item.id) as InvocationDocument;
  return [item.id, item.orgId, item.projectId, startedBy(item), item.targetType, JSON.stringify(document), item.events.length, item.occurredAt, lastEventTime(item)];
}

function eventTime(item: NewInvocation, index: number): Date {
  return item.eventTimes?.[index] ?? item.occurredAt;
}

function lastEventTime(item: NewInvocation): Date {
  return eventTime(item, item.events.length - 1);
}

function startedBy(item: NewInvocation): string | null {
  for (const data of item.events) {
    const first = data.type === 'InvocationQueued' || data.type === 'InvocationScheduled' || data.type === 'InvocationStarted' || data.type === 'InvocationFailed';
    if (first && data.request) {
      return data.request.startedByTokenId;
    }
  }
  return null;
}

/** `columns` with the column count fixed, so an empty list still gives one (empty) array per column. */
function columnsOf<T>(rows: readonly T[], count: number, values: (row: T) => unknown[]): unknown[][] {
  const result = columns(rows, values);
  while (result.length < count) result.push([]);
  return result;
}

/** Row values → one array per column, the form `unnest` takes. */
function columns<T>(rows: readonly T[], values: (row: T) => unknown[]): unknown[][] {
  const result: unknown[][] = [];
  for (const row of rows) {
    values(row).forEach((value, index) => {
      (result[index] ??= []).push(value);
    });
  }
  return result;
}

function keyOf(projectId: string, targetType: string, mode: string, key: string): string {
  return JSON.stringify([projectId, targetType, mode, key]);
}

/** The rows of an `UPDATE … RETURNING`: TypeORM answers `[rows, affected]` for it on pg. */
export function returnedRows<T>(result: unknown): T[] {
  return (Array.isArray(result) && Array.isArray(result[0]) ? result[0] : result) as T[];
}
