import { Injectable } from '@nestjs/common';
import { DataSource, IsNull, type EntityManager } from 'typeorm';
import { returningRows, TransactionRunner } from '@runline/db';
import { ProjectEntity, type ProjectType } from './project.entity.js';

/** A project as the token pipeline needs it. */
export interface ProjectAccessRow {
  id: string;
  orgId: string;
  type: ProjectType;
  deleted: boolean;
  /** True when the project has no settings row yet (the spec's default). */
  externalApiEnabled: boolean;
  publishedVersion: number;
  configVersion: number;
}

/** A project's `config_version` and its organization's `plan_version`. */
export interface ProjectVersionRow {
  id: string;
  config_version: number;
  plan_version: number;
}

/** The rate limits set on a project and on its organization's plan (null: not set there). */
export interface RateLimitSettingsRow {
  orgId: string;
  configVersion: number;
  planVersion: number;
  project: { limit: number | null; windowMs: number | null };
  plan: { limit: number | null; windowMs: number | null };
}

const SELECT_VERSIONS = 'SELECT p.id, p.config_version, o.plan_version FROM projects p JOIN organizations o ON o.id = p.org_id';

/** Projects: their definitions, versions and deletion. */
@Injectable()
export class ProjectRepository {
  constructor(
    private readonly dataSource: DataSource,
    private readonly transactions: TransactionRunner,
  ) {}

  async insert(manager: EntityManager, project: ProjectEntity): Promise<void> {
    await manager.insert(ProjectEntity, project);
  }

  /** The project, its row locked until the transaction ends (which also orders concurrent changes). */
  lockForUpdate(manager: EntityManager, id: string): Promise<ProjectEntity> {
    return manager.findOneOrFail(ProjectEntity, { where: { id }, lock: { mode: 'pessimistic_write' } });
  }

  async save(manager: EntityManager, project: ProjectEntity): Promise<void> {
    await manager.save(ProjectEntity, project);
  }

  /**
   * Gives the project a new configuration version inside the transaction of a change; the row
   * lock it takes also orders concurrent changes of one project.
   */
  async nextConfigVersion(manager: EntityManager, projectId: string): Promise<number> {
    const rows = returningRows<{ config_version: number }>(
      await manager.query('UPDATE projects SET config_version = config_version + 1 WHERE id = $1 RETURNING config_version', [projectId]),
    );
    if (!rows[0]) throw new Error(`project ${projectId} does not exist`);
    return rows[0].config_version;
  }

  /** Saves the draft as the next draft version and returns that version. */
  async saveDraft(projectId: string, definition: object, savedAt: Date): Promise<number> {
    // One statement: the row lock orders it with a concurrent publish, and two saves never share a version.
    const rows = returningRows<{ draft_version: number }>(
      await this.dataSource.query(
        'UPDATE projects SET draft_definition = $2::json, draft_updated_at = $3, draft_version = draft_version + 1 WHERE id = $1 RETURNING draft_version',
        [projectId, JSON.stringify(definition), savedAt],
      ),
    );
    if (!rows[0]) throw new Error(`project ${projectId} does not exist`);
    return rows[0].draft_version;
  }

  /** The organization's live projects, oldest first. */
  listLive(orgId: string): Promise<ProjectEntity[]> {
    return this.dataSource.getRepository(ProjectEntity).find({ where: { orgId, deletedAt: IsNull() }, order: { createdAt: 'ASC', id: 'ASC' } });
  }

  /** The project's draft definition; null when it has none. */
  async draftOf(projectId: string): Promise<object | null> {
    const rows: Array<{ draft_definition: object | null }> = await this.dataSource.query('SELECT draft_definition FROM projects WHERE id = $1', [projectId]);
    return rows[0]?.draft_definition ?? null;
  }

  /** The project if it is in that organization (deleted or not). */
  findInOrganization(id: string, orgId: string): Promise<ProjectEntity | null> {
    return this.dataSource.getRepository(ProjectEntity).findOneBy({ id, orgId });
  }

  /** The project with its master switch; null when it does not exist. */
  async accessOf(projectId: string): Promise<ProjectAccessRow | null> {
    const rows: Array<{
      id: string;
      org_id: string;
      type: ProjectType;
      deleted_at: Date | null;
      external_api_enabled: boolean | null;
      published_version: number;
      config_version: number;
    }> = await this.dataSource.query(
      `SELECT p.id, p.org_id, p.type, p.deleted_at, s.external_api_enabled, p.published_version, p.config_version
         FROM projects p LEFT JOIN project_api_settings s ON s.project_id = p.id
        WHERE p.id = $1`,
      [projectId],
    );
    const row = rows[0];
    if (!row) return null;
    return {
      id: row.id,
      orgId: row.org_id,
      type: row.type,
      deleted: row.deleted_at !== null,
      externalApiEnabled: row.external_api_enabled ?? true,
      publishedVersion: row.published_version,
      configVersion: row.config_version,
    };
  }

  /**
   * The versions of these projects (prepared statements, parsed and planned once per
   * connection: this is on every request's path). One id, the usual case, needs no array.
   */
  versionsOf(ids: string[]): Promise<ProjectVersionRow[]> {
    return ids.length === 1
      ? this.transactions.runStatement<ProjectVersionRow[]>(`${SELECT_VERSIONS} WHERE p.id = $1`, ids)
      : this.transactions.runStatement<ProjectVersionRow[]>(`${SELECT_VERSIONS} WHERE p.id = ANY($1::uuid[])`, [ids]);
  }

  /** The project's and its plan's rate limits, with the versions they were read at; null when the project does not exist. */
  async rateLimitSettingsOf(projectId: string): Promise<RateLimitSettingsRow | null> {
    const rows: Array<{
      org_id: string;
      config_version: number;
      plan_version: number;
      project_limit: number | null;
      project_window: string | null;
      plan_limit: number | null;
      plan_window: string | null;
    }> = await this.dataSource.query(
      `SELECT p.org_id, p.config_version, o.plan_version, s.rate_limit_per_minute AS project_limit, s.rate_limit_window_ms AS project_window,
              o.rate_limit_per_minute AS plan_limit, o.rate_limit_window_ms AS plan_window
         FROM projects p JOIN organizations o ON o.id = p.org_id LEFT JOIN project_api_settings s ON s.project_id = p.id
        WHERE p.id = $1`,
      [projectId],
    );
    const row = rows[0];
    if (!row) return null;
    return {
      orgId: row.org_id,
      configVersion: row.config_version,
      planVersion: row.plan_version,
      project: { limit: numberOrNull(row.project_limit), windowMs: numberOrNull(row.project_window) },
      plan: { limit: numberOrNull(row.plan_limit), windowMs: numberOrNull(row.plan_window) },
    };
  }
}

/** pg returns bigint as a string. */
function numberOrNull(value: string | number | null | undefined): number | null {
  return value === null || value === undefined ? null : Number(value);
}
