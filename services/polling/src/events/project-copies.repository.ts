import type { EntityManager } from 'typeorm';

/** A project as the poller needs it. */
export interface ProjectState {
  pollable: boolean;
  configVersion: number;
}

/**
 * The project moves to at least `version`; a project first heard of here is pollable (the
 * gateway lets a trigger be registered only while the switch is on).
 */
export function raiseVersion(manager: EntityManager, projectId: string, orgId: string, version: number): Promise<unknown> {
  return manager.query(
    `INSERT INTO project_copies AS p (project_id, org_id, config_version) VALUES ($1, $2, $3)
     ON CONFLICT (project_id) DO UPDATE SET config_version = GREATEST(p.config_version, EXCLUDED.config_version)`,
    [projectId, orgId, version],
  );
}

/**
 * The project's master switch as of settings `version`: it replaces only older settings (the
 * same change arrives twice and out of order), and the config version only grows.
 */
export function applySettings(manager: EntityManager, projectId: string, orgId: string, externalApiEnabled: boolean, version: number): Promise<unknown> {
  return manager.query(
    `INSERT INTO project_copies AS p (project_id, org_id, external_api_enabled, settings_version, config_version)
     VALUES ($1, $2, $3, $4, $4)
     ON CONFLICT (project_id) DO UPDATE SET
       external_api_enabled = CASE WHEN p.settings_version < EXCLUDED.settings_version THEN EXCLUDED.external_api_enabled ELSE p.external_api_enabled END,
       settings_version = GREATEST(p.settings_version, EXCLUDED.settings_version),
       config_version = GREATEST(p.config_version, EXCLUDED.config_version)`,
    [projectId, orgId, externalApiEnabled, version],
  );
}

/** The project is deleted, for good: no later event makes it pollable again. */
export async function markDeleted(manager: EntityManager, projectId: string, orgId: string, version: number): Promise<void> {
  await manager.query(
    `INSERT INTO project_copies AS p (project_id, org_id, deleted, config_version) VALUES ($1, $2, true, $3)
     ON CONFLICT (project_id) DO UPDATE SET deleted = true, config_version = GREATEST(p.config_version, EXCLUDED.config_version)`,
    [projectId, orgId, version],
  );
}

/** The state of each of `projectIds` that an event has told this service about (the others are absent). */
export async function projectStates(manager: EntityManager, projectIds: readonly string[]): Promise<Map<string, ProjectState>> {
  const rows: Array<{ project_id: string; external_api_enabled: boolean; deleted: boolean; config_version: number }> = await manager.query(
    'SELECT project_id, external_api_enabled, deleted, config_version FROM project_copies WHERE project_id = ANY($1::uuid[])',
    [projectIds],
  );
  return new Map(rows.map((row) => [row.project_id, { pollable: row.external_api_enabled && !row.deleted, configVersion: row.config_version }]));
}
