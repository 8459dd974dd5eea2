import type { EntityManager } from 'typeorm';
import { returningRows } from '@runline/db';

/**
 * Gives the project a new configuration version inside the transaction of a change; the row
 * lock it takes also orders concurrent changes of one project.
 */
export async function nextConfigVersion(manager: EntityManager, projectId: string): Promise<number> {
  const rows = returningRows<{ config_version: number }>(
    await manager.query('UPDATE projects SET config_version = config_version + 1 WHERE id = $1 RETURNING config_version', [projectId]),
  );
  if (!rows[0]) throw new Error(`project ${projectId} does not exist`);
  return rows[0].config_version;
}
