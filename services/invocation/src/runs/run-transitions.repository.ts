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
import { columns, columnsOf, eventRowOf, insertEvents } from './sql-rows.js';

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
  return (await transitionAt(tx, invocationId, expected, change, history))?.document ?? null;
}

/** `transition`, also saying the run's sequence after it (its last event's); null when the run had moved on. */
export async function transitionAt(
  tx: TransactionContext,
  invocationId: string,
  expected: Expectation,
  change: StateChange,
  history: HistoryAppend,
): Promise<{ document: InvocationDocument | null; sequence: number } | null> {
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
  return { document, sequence: row.sequence };
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

/** One transition of a run this process holds as it is (`transitionKnown`), for `transitionKnownBatch`. */
export interface KnownTransition {
  known: KnownRun;
  expected: Expectation;
  change: StateChange;
  history: HistoryAppend;
}

/** What `transitionKnown` resolves with: the new document and the run as now known, or null when the run had moved on. */
export type KnownOutcome = { document: InvocationDocument; known: KnownRun | null } | null;

/**
 * `transitionKnown` for many runs in ONE statement: the state rows, events, read models and
 * outbox rows of every transition that still applies (each guarded by its own expectations and
 * `known.sequence`) commit together, or none of them do. A run whose row changed since falls
 * back to `transition` in a transaction of its own, as with `transitionKnown`. Two transitions
 * of one run in `items` go in separate statements, in their order.
 */
export async function transitionKnownBatch(runner: TransactionRunner, items: readonly KnownTransition[]): Promise<KnownOutcome[]> {
  return inRoundsOfDistinctRuns(items, (item) => item.known.id, (round) => transitionRound(runner, round));
}

/** One transition of a run in a transaction, for `transitionMany`. */
export interface Transitioning {
  invocationId: string;
  expected: Expectation;
  change: StateChange;
  history: HistoryAppend;
}

/**
 * `transition` for many runs in one transaction, in two statements whatever their number (the
 * state rows updated and their read models read, then events and read models written): each run's change
 * applies only if it is as expected. Resolves, per item, with the run as now written (its next
 * transition may then be one statement: transitionKnown), or null when it had moved on. Two
 * transitions of one run in `items` go in separate rounds, in their order.
 */
export async function transitionMany(tx: TransactionContext, items: readonly Transitioning[]): Promise<Array<KnownRun | null>> {
  return inRoundsOfDistinctRuns(items, (item) => item.invocationId, (round) => transitionManyRound(tx, round));
}

async function transitionManyRound(tx: TransactionContext, items: readonly Transitioning[]): Promise<Array<KnownRun | null>> {
  const { manager } = tx;
  // The read models as they were before: the UPDATE in the WITH does not touch them.
  const rows: Array<{ id: string; org_id: string; project_id: string; sequence: number; document: InvocationDocument | null }> = await manager.query(
    `WITH moved AS (${STATE_ROWS_UPDATE} RETURNING i.id, i.org_id, i.project_id, i.sequence)
     SELECT moved.id::text AS id, moved.org_id, moved.project_id, moved.sequence, v.document
       FROM moved LEFT JOIN invocation_views v ON v.id = moved.id`,
    columnsOf(items.map((item) => transitionRowOf(item, null, null)), STATE_ROW_COLUMNS, (row) => row),
  );
  if (rows.length === 0) return items.map(() => null);
  const rowOf = new Map(rows.map((row) => [row.id, row]));
  const written = items.map((item) => {
    const row = rowOf.get(item.invocationId);
    if (!row) return null;
    const owner = { id: row.id, orgId: row.org_id, projectId: row.project_id };
    const appended = item.history.onto(owner, row.sequence - item.history.eventCount, row.document);
    for (const message of appended.outbox) tx.emit(message);
    const known: KnownRun = { ...owner, sequence: row.sequence, document: appended.document as InvocationDocument };
    return { known, at: item.history.at, stored: appended.stored };
  });
  const applied = written.filter((one) => one !== null);
  await manager.query(
    `WITH appended AS (
       INSERT INTO invocation_events (invocation_id, sequence, id, type, occurred_at, data)
       SELECT * FROM unnest($1::uuid[], $2::int[], $3::uuid[], $4::text[], $5::timestamptz[], $6::jsonb[])
     )
     UPDATE invocation_views v SET document = u.document, sequence = u.sequence, updated_at = u.at
       FROM unnest($7::uuid[], $8::jsonb[], $9::int[], $10::timestamptz[]) AS u(id, document, sequence, at)
      WHERE v.id = u.id`,
    [
      ...columnsOf(applied.flatMap((one) => one.stored), 6, eventRowOf),
      ...columnsOf(applied, 4, (one) => [one.known.id, JSON.stringify(one.known.document), one.known.sequence, one.at]),
    ],
  );
  return written.map((one) => one?.known ?? null);
}

/**
 * Runs `write` over `items` in rounds of distinct runs (a run's second transition in a later
 * round, in order), each round's results in its items' places.
 */
async function inRoundsOfDistinctRuns<T, R>(items: readonly T[], runOf: (item: T) => string, write: (round: T[]) => Promise<R[]>): Promise<R[]> {
  const outcomes = new Array<R>(items.length);
  let rest = [...items.keys()];
  while (rest.length > 0) {
    const seen = new Set<string>();
    const round: number[] = [];
    const later: number[] = [];
    for (const index of rest) {
      const id = runOf(items[index]!);
      if (seen.has(id)) later.push(index);
      else {
        seen.add(id);
        round.push(index);
      }
    }
    const results = await write(round.map((index) => items[index]!));
    round.forEach((index, position) => (outcomes[index] = results[position]!));
    rest = later;
  }
  return outcomes;
}

/** One statement for transitions of distinct runs. */
async function transitionRound(runner: TransactionRunner, items: readonly KnownTransition[]): Promise<KnownOutcome[]> {
  for (const item of items) if (item.history.eventCount === 0) throw new Error('transitionKnown needs at least one event');
  const appended = items.map(({ known, history }) => history.onto(known, known.sequence, known.document));
  const documents = appended.map((one) => one.document as InvocationDocument);
  const events = appended.flatMap((one) => one.stored);
  const messages = appended.flatMap((one) => one.outbox);
  const owners = items.flatMap((item, index) => appended[index]!.outbox.map(() => item.known.id));
  const runColumns = columnsOf(items.map((item, index) => transitionRowOf({ ...item, invocationId: item.known.id }, item.known.sequence, documents[index]!)), STATE_ROW_COLUMNS, (row) => row);
  const eventColumns = columnsOf(events, 6, eventRowOf);
  const parameters: unknown[] = [...runColumns, ...eventColumns];
  const published = runner.outboxInsertOwned(messages, owners, 'moved', parameters.length + 1);
  parameters.push(...published.parameters);
  const rows = await runner.runStatement<Array<{ id: string }>>(
    `WITH moved AS (
       ${STATE_ROWS_UPDATE}
       RETURNING i.id, i.sequence, u.document, u.at
     ), appended AS (
       INSERT INTO invocation_events (invocation_id, sequence, id, type, occurred_at, data)
       SELECT e.* FROM unnest($24::uuid[], $25::int[], $26::uuid[], $27::text[], $28::timestamptz[], $29::jsonb[])
                       AS e(invocation_id, sequence, id, type, occurred_at, data)
        WHERE e.invocation_id IN (SELECT id FROM moved)
     ), viewed AS (
       UPDATE invocation_views v SET document = moved.document, sequence = moved.sequence, updated_at = moved.at
         FROM moved WHERE v.id = moved.id
     )${messages.length > 0 ? `, published AS (${published.sql})` : ''}
     SELECT id::text AS id FROM moved`,
    parameters,
    (written) => {
      const moved = new Set(written.map((row) => row.id));
      return messages.filter((_message, index) => moved.has(owners[index]!));
    },
  );
  const moved = new Set(rows.map((row) => row.id));
  const outcomes: KnownOutcome[] = [];
  for (const [index, item] of items.entries()) {
    const document = documents[index]!;
    if (moved.has(item.known.id)) {
      outcomes.push({ document, known: { ...item.known, sequence: item.known.sequence + item.history.eventCount, document } });
      continue;
    }
    const current = await runner.run((tx) => transition(tx, item.known.id, item.expected, item.change, item.history));
    outcomes.push(current ? { document: current, known: null } : null);
  }
  return outcomes;
}

/**
 * The state rows' update of transitions of distinct runs, one row of parameters $1..$23 each
 * (transitionRowOf): each applied only if its run is as expected, and, when it gives one, at the
 * sequence its caller knows.
 */
const STATE_ROW_COLUMNS = 23;
const STATE_ROWS_UPDATE = `UPDATE invocations i
          SET status = u.status, sequence = i.sequence + u.event_count, updated_at = u.at,
              attempt = CASE WHEN u.set_attempt THEN u.attempt ELSE i.attempt END,
              lease_owner = CASE WHEN u.set_lease THEN u.lease_owner ELSE i.lease_owner END,
              lease_expires_at = CASE WHEN u.set_lease THEN u.lease_expires_at ELSE i.lease_expires_at END,
              run_after = CASE WHEN u.set_run_after THEN u.run_after ELSE i.run_after END,
              sealed_resume_state = CASE WHEN u.set_resume_state THEN u.sealed_resume_state ELSE i.sealed_resume_state END,
              waiting_job = CASE WHEN u.set_waiting_job THEN u.waiting_job ELSE i.waiting_job END
         FROM unnest($1::uuid[], $2::text[], $3::text[], $4::int[], $5::timestamptz[], $6::int[], $7::bool[], $8::int[],
                     $9::bool[], $10::text[], $11::timestamptz[], $12::bool[], $13::timestamptz[], $14::bool[], $15::text[],
                     $16::bool[], $17::text[], $18::text[], $19::bool[], $20::int[], $21::text[], $22::int[], $23::jsonb[])
              AS u(id, expected_status, status, event_count, at, known_sequence, set_attempt, attempt,
                   set_lease, lease_owner, lease_expires_at, set_run_after, run_after, set_resume_state, sealed_resume_state,
                   set_waiting_job, waiting_job, expected_lease_owner, expect_dispatched, expect_waiting, expected_waiting_job,
                   expected_sequence, document)
        WHERE i.id = u.id AND i.status = u.expected_status AND (u.known_sequence IS NULL OR i.sequence = u.known_sequence)
          AND (u.expected_lease_owner IS NULL OR i.lease_owner = u.expected_lease_owner)
          AND (NOT u.expect_dispatched OR i.run_after IS NULL)
          AND (u.expect_waiting = 0 OR (u.expect_waiting = 1 AND i.waiting_job IS NULL)
               OR (u.expect_waiting = 2 AND i.waiting_job = u.expected_waiting_job))
          AND (u.expected_sequence IS NULL OR i.sequence = u.expected_sequence)`;

/** A transition's row of STATE_ROWS_UPDATE's unnest, in its column order; the new document only where the statement writes it. */
function transitionRowOf(
  { invocationId, expected, change, history }: Transitioning,
  knownSequence: number | null,
  document: InvocationDocument | null,
): unknown[] {
  const expectWaiting = expected.waitingJob === undefined ? 0 : expected.waitingJob === null ? 1 : 2;
  return [
    invocationId,
    expected.status,
    change.status,
    history.eventCount,
    history.at,
    knownSequence,
    change.attempt !== undefined,
    change.attempt ?? null,
    change.lease !== undefined,
    change.lease?.owner ?? null,
    change.lease?.expiresAt ?? null,
    change.runAfter !== undefined,
    change.runAfter ?? null,
    change.sealedResumeState !== undefined,
    change.sealedResumeState ?? null,
    change.waitingJob !== undefined,
    change.waitingJob ?? null,
    expected.leaseOwner ?? null,
    expected.dispatched === true,
    expectWaiting,
    expected.waitingJob ?? null,
    expected.sequence ?? null,
    document === null ? null : JSON.stringify(document),
  ];
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
