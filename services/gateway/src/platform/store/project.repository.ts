import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import { returningRows, TransactionRunner } from '@runline/db';
import type { ProjectEntity, ProjectType } from './project.entity.js';

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

interface RawProject {
  id: string;
  org_id: string;
  name: string;
  type: ProjectType;
  draft_definition: object | null;
  draft_updated_at: Date | null;
  published_definition: object | null;
  draft_version: number;
  published_version: number;
  published_at: Date | null;
  created_at: Date;
  config_version: number;
  deleted_at: Date | null;
}

const COLUMNS =
  'id, org_id, name, type, draft_definition, draft_updated_at, published_definition, draft_version, published_version, published_at, created_at, config_version, deleted_at';

const SELECT_VERSIONS = 'SELECT p.id, p.config_version, o.plan_version FROM projects p JOIN organizations o ON o.id = p.org_id';

/** Projects: their definitions, versions and deletion. */
@Injectable()
export class ProjectRepository {
  constructor(
    private readonly dataSource: DataSource,
    private readonly transactions: TransactionRunner,
  ) {}

  async insert(manager: EntityManager, project: ProjectEntity): Promise<void> {
    await manager.query(
      `INSERT INTO projects (${COLUMNS})
       VALUES ($1, $2, $3, $4, $5::json, $6, $7::json, $8, $9, $10, $11, $12, $13)`,
      [
        project.id,
        project.orgId,
        project.name,
        project.type,
        jsonOrNull(project.draftDefinition),
        project.draftUpdatedAt,
        jsonOrNull(project.publishedDefinition),
        project.draftVersion,
        project.publishedVersion,
        project.publishedAt,
        project.createdAt,
        project.configVersion,
        project.deletedAt,
      ],
    );
  }

  /** The project, its row locked until the transaction ends (which also orders concurrent changes). */
  async lockForUpdate(manager: EntityManager, id: string): Promise<ProjectEntity> {
    const [row]: RawProject[] = await manager.query(`SELECT ${COLUMNS} FROM projects WHERE id = $1 FOR UPDATE`, [id]);
    if (!row) throw new Error(`project ${id} does not exist`);
    return projectOf(row);
  }

  /** Writes what a publish changed on the project the caller locked. */
  async savePublished(manager: EntityManager, project: ProjectEntity): Promise<void> {
    await manager.query('UPDATE projects SET published_definition = $2::json, published_version = $3, published_at = $4, config_version = $5 WHERE id = $1', [
      project.id,
      jsonOrNull(project.publishedDefinition),
      project.publishedVersion,
      project.publishedAt,
      project.configVersion,
    ]);
  }

  /** Writes the deletion of the project the caller locked (the row stays, marked deleted). */
  async saveDeleted(manager: EntityManager, project: ProjectEntity): Promise<void> {
    await manager.query('UPDATE projects SET deleted_at = $2, config_version = $3 WHERE id = $1', [project.id, project.deletedAt, project.configVersion]);
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
  async listLive(orgId: string): Promise<ProjectEntity[]> {
    const rows: RawProject[] = await this.dataSource.query(`SELECT ${COLUMNS} FROM projects WHERE org_id = $1 AND deleted_at IS NULL ORDER BY created_at, id`, [orgId]);
    return rows.map(projectOf);
  }

  /** The project's draft definition; null when it has none. */
  async draftOf(projectId: string): Promise<object | null> {
    const rows: Array<{ draft_definition: object | null }> = await this.dataSource.query('SELECT draft_definition FROM projects WHERE id = $1', [projectId]);
    return rows[0]?.draft_definition ?? null;
  }

  /** The project if it is in that organization (deleted or not). */
  async findInOrganization(id: string, orgId: string): Promise<ProjectEntity | null> {
    const [row]: RawProject[] = await this.dataSource.query(`SELECT ${COLUMNS} FROM projects WHERE id = $1 AND org_id = $2`, [id, orgId]);
    return row ? projectOf(row) : null;
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

/** A `json` parameter: SQL NULL for null (JSON.stringify would store the JSON value `null`). */
function jsonOrNull(value: object | null): string | null {
  return value === null ? null : JSON.stringify(value);
}

function projectOf(row: RawProject): ProjectEntity {
  return {
    id: row.id,
    orgId: row.org_id,
    name: row.name,
    type: row.type,
    draftDefinition: row.draft_definition,
    draftUpdatedAt: row.draft_updated_at,
    publishedDefinition: row.published_definition,
    draftVersion: row.draft_version,
    publishedVersion: row.published_version,
    publishedAt: row.published_at,
    createdAt: row.created_at,
    configVersion: row.config_version,
    deletedAt: row.deleted_at,
  };
}
