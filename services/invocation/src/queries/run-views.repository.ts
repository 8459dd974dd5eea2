import type { InvocationViewEntity } from '../entities/invocation-view.entity.js';
import type { Queryable } from './run-logs.repository.js';

interface RawView {
  id: string;
  org_id: string;
  project_id: string;
  started_by_token_id: string | null;
  target_type: string;
  document: Record<string, unknown>;
  /** bigint: pg answers a string. */
  sequence: string;
  created_at: Date;
  updated_at: Date;
}

const COLUMNS = 'id, org_id, project_id, started_by_token_id, target_type, document, sequence, created_at, updated_at';

/** The run's view if it is the organization's; null otherwise (another organization's run included). */
export async function findRunView(db: Queryable, invocationId: string, orgId: string): Promise<InvocationViewEntity | null> {
  const [row] = (await db.query(`SELECT ${COLUMNS} FROM invocation_views WHERE id = $1 AND org_id = $2`, [invocationId, orgId])) as RawView[];
  return row ? viewOf(row) : null;
}

function viewOf(row: RawView): InvocationViewEntity {
  return {
    id: row.id,
    orgId: row.org_id,
    projectId: row.project_id,
    startedByTokenId: row.started_by_token_id,
    targetType: row.target_type,
    document: row.document,
    sequence: Number(row.sequence),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}
