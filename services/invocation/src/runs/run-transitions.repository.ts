/**
 * Transitions of one run: the event appended, the state row and the read model updated, and
 * what the transition publishes written to the outbox, together; applied only while the run is
 * as expected (optimistic concurrency), so a repeated or late change writes nothing.
 */
import type { DataSource } from 'typeorm';
import { returningRows, type TransactionContext, type TransactionRunner } from '@runline/db';
import type { InvocationDocument } from '../lifecycle/invocation.projector.js';
import type { HistoryAppend } from '../lifecycle/run-history.js';
import type { Expectation, StateChange } from '../lifecycle/run-lifecycle.js';
import { columns, eventRowOf, insertEvents } from './sql-rows.js';

/**
 * Appends `history` to one run and applies `change`, only if the run is still as `expected`.
 * Returns the new document, or null when the run had moved on (another process finished or
 * interrupted it): nothing is written then.
 */
export async function transition(
  tx: TransactionContext,
  invocationId: string,
  expected: Expectation,
  change: StateChange,
  history: HistoryAppend,
): Promise<InvocationDocument | null> {
  const { manager } = tx;
  const at = history.at;
  const { set, where, parameters } = stateUpdate(invocationId, expected, change, history.eventCount, at);
  const [row] = returningRows<{ org_id: string; project_id: string; sequence: number }>(
    await manager.query(`UPDATE invocations SET ${set} WHERE ${where} RETURNING org_id, project_id, sequence`, parameters),
  );
  if (!row) return null;
  const views: Array<{ document: InvocationDocument }> = await manager.query('SELECT document FROM invocation_views WHERE id = $1', [invocationId]);
  const owner = { id: invocationId, orgId: row.org_id, projectId: row.project_id };
  const { stored, document, outbox } = history.onto(owner, row.sequence - history.eventCount, views[0]?.document ?? null);
  await insertEvents(manager, stored);
  await manager.query('UPDATE invocation_views SET document = $2, sequence = $3, updated_at = $4 WHERE id = $1', [
    invocationId,
    JSON.stringify(document),
    row.sequence,
    at,
  ]);
  for (const message of outbox) tx.emit(message);
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
  history: HistoryAppend,
): Promise<{ document: InvocationDocument; known: KnownRun | null } | null> {
  if (history.eventCount === 0) throw new Error('transitionKnown needs at least one event');
  const at = history.at;
  const appended = history.onto(known, known.sequence, known.document);
  const { stored, outbox } = appended;
  const document = appended.document as InvocationDocument;

  const { set, where, parameters } = stateUpdate(known.id, expected, change, history.eventCount, at);
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
  if (rows.length === 1) return { document, known: { ...known, sequence: known.sequence + history.eventCount, document } };
  const current = await runner.run((tx) => transition(tx, known.id, expected, change, history));
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
  if (expected.waitingJob === null) where += ' AND waiting_job IS NULL';
  else if (expected.waitingJob !== undefined) {
    parameters.push(expected.waitingJob);
    where += ` AND waiting_job = $${parameters.length}`;
  }
  if (expected.sequence !== undefined) {
    parameters.push(expected.sequence);
    where += ` AND sequence = $${parameters.length}`;
  }
  return { set: set.join(', '), where, parameters };
}

/** Keeps a RUNNING run's lease while this process runs it; a run no longer held by `owner` is left alone. */
export async function renewLease(dataSource: DataSource, id: string, owner: string, expiresAt: Date): Promise<void> {
  await dataSource.query(`UPDATE invocations SET lease_expires_at = $3 WHERE id = $1 AND lease_owner = $2 AND status = 'RUNNING'`, [id, owner, expiresAt]);
}
