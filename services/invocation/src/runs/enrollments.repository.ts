import type { DataSource } from 'typeorm';

/**
 * ONE_TIME enrollment: the first run to claim a subject of a project holds it. Returns the run
 * that holds the subject now (this one, when its claim won).
 */
export async function claimEnrollment(dataSource: DataSource, projectId: string, subject: string, invocationId: string): Promise<string | undefined> {
  const rows: Array<{ invocation_id: string }> = await dataSource.query(
    `WITH inserted AS (
       INSERT INTO enrollments (project_id, subject, invocation_id) VALUES ($1, $2, $3)
       ON CONFLICT (project_id, subject) DO NOTHING RETURNING invocation_id)
     SELECT invocation_id FROM inserted
     UNION ALL SELECT invocation_id FROM enrollments WHERE project_id = $1 AND subject = $2
     LIMIT 1`,
    [projectId, subject, invocationId],
  );
  return rows[0]?.invocation_id;
}
