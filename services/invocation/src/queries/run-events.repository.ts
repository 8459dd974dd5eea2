import type { InvocationEvent, InvocationEventData } from '../lifecycle/invocation-event.js';
import type { Queryable } from './run-logs.repository.js';

interface RawRun {
  org_id: string;
  project_id: string;
  started_by_token_id: string | null;
  target_type: string;
  final_document: Record<string, unknown> | null;
  events: Array<{ id: string; sequence: number; occurred_at: string; data: InvocationEventData }>;
}

/** A run's recorded events after a sequence, with what a reader needs to check its caller and, once it ended, the run itself. */
export interface RunEvents {
  events: InvocationEvent[];
  startedByTokenId: string | null;
  targetType: string;
  /** The run's read model when its status is final; null while it is not. */
  finalDocument: Record<string, unknown> | null;
}

/**
 * A run's stored events after `afterSequence`, oldest first, if the run is the organization's;
 * null otherwise (another organization's run included). The run's view says whose it is (the
 * event store holds only the run's id), who started it, and (once it ended) what GET shows:
 * one read for a run stream's start.
 */
export async function findRunEvents(db: Queryable, invocationId: string, orgId: string, afterSequence: number): Promise<RunEvents | null> {
  const [row] = (await db.query(
    `SELECT v.org_id, v.project_id, v.started_by_token_id, v.target_type,
            CASE WHEN v.document->>'status' IN ('SUCCEEDED', 'FAILED', 'TIMEOUT', 'CANCELLED') THEN v.document END AS final_document,
            COALESCE((SELECT json_agg(json_build_object('id', e.id, 'sequence', e.sequence, 'occurred_at', e.occurred_at, 'data', e.data) ORDER BY e.sequence)
                        FROM invocation_events e WHERE e.invocation_id = v.id AND e.sequence > $3), '[]'::json) AS events
       FROM invocation_views v
      WHERE v.id = $1 AND v.org_id = $2`,
    [invocationId, orgId, afterSequence],
  )) as RawRun[];
  if (!row) return null;
  return {
    events: row.events.map((event) => ({
      id: event.id,
      invocationId,
      orgId: row.org_id,
      projectId: row.project_id,
      sequence: event.sequence,
      occurredAt: new Date(event.occurred_at).toISOString(),
      data: event.data,
    })),
    startedByTokenId: row.started_by_token_id,
    targetType: row.target_type,
    finalDocument: row.final_document,
  };
}
