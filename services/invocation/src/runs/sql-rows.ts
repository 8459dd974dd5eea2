/**
 * Row shapes shared by the run repositories: values in the column order of their statements,
 * and as one array per column, the form `unnest` takes.
 */
import type { EntityManager } from 'typeorm';
import type { InvocationEvent } from '../lifecycle/invocation-event.js';

/** An `invocation_events` row: invocation_id, sequence, id, type, occurred_at, data. */
export function eventRowOf(event: InvocationEvent): unknown[] {
  return [event.invocationId, event.sequence, event.id, event.data.type, event.occurredAt, JSON.stringify(event.data)];
}

/** `columns` with the column count fixed, so an empty list still gives one (empty) array per column. */
export function columnsOf<T>(rows: readonly T[], count: number, values: (row: T) => unknown[]): unknown[][] {
  const result = columns(rows, values);
  while (result.length < count) result.push([]);
  return result;
}

/** Row values → one array per column, the form `unnest` takes. */
export function columns<T>(rows: readonly T[], values: (row: T) => unknown[]): unknown[][] {
  const result: unknown[][] = [];
  for (const row of rows) {
    values(row).forEach((value, index) => {
      (result[index] ??= []).push(value);
    });
  }
  return result;
}

export function keyOf(projectId: string, targetType: string, mode: string, key: string): string {
  return JSON.stringify([projectId, targetType, mode, key]);
}

/** Appends stored events of one or more runs in one statement. */
export async function insertEvents(manager: EntityManager, events: InvocationEvent[]): Promise<void> {
  if (events.length === 0) return;
  await manager.query(
    `INSERT INTO invocation_events (invocation_id, sequence, id, type, occurred_at, data)
     SELECT * FROM unnest($1::uuid[], $2::int[], $3::uuid[], $4::text[], $5::timestamptz[], $6::jsonb[])`,
    columns(events, eventRowOf),
  );
}
