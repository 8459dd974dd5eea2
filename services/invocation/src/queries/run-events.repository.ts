import type { InvocationEvent, InvocationEventData } from '../lifecycle/invocation-event.js';
import type { Queryable } from './run-logs.repository.js';

interface RawEvent {
  id: string;
  sequence: number;
  occurred_at: Date;
  data: InvocationEventData;
  org_id: string;
  project_id: string;
}

/**
 * A run's stored events after `afterSequence`, oldest first, if the run is the organization's;
 * null otherwise (another organization's run included). The run's view says whose it is: the
 * event store holds only the run's id.
 */
export async function findRunEvents(db: Queryable, invocationId: string, orgId: string, afterSequence: number): Promise<InvocationEvent[] | null> {
  const rows = (await db.query(
    `SELECT e.id, e.sequence, e.occurred_at, e.data, v.org_id, v.project_id
       FROM invocation_views v
       LEFT JOIN invocation_events e ON e.invocation_id = v.id AND e.sequence > $3
      WHERE v.id = $1 AND v.org_id = $2
      ORDER BY e.sequence`,
    [invocationId, orgId, afterSequence],
  )) as Array<RawEvent | (Omit<RawEvent, 'id'> & { id: null })>;
  if (rows.length === 0) return null;
  return rows
    .filter((row): row is RawEvent => row.id !== null)
    .map((row) => ({
      id: row.id,
      invocationId,
      orgId: row.org_id,
      projectId: row.project_id,
      sequence: row.sequence,
      occurredAt: row.occurred_at.toISOString(),
      data: row.data,
    }));
}
