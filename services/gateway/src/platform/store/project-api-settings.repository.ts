import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import type { EnrollmentPolicy, OnErrorPolicy, ProjectApiSettingsEntity } from './project-api-settings.entity.js';

interface RawSettings {
  project_id: string;
  external_api_enabled: boolean;
  default_enrollment_policy: EnrollmentPolicy;
  default_on_error_policy: OnErrorPolicy;
  default_callback_url: string | null;
  default_callback_secret_sealed: string | null;
  rate_limit_per_minute: number | null;
  /** bigint: pg answers a string. */
  rate_limit_window_ms: string | null;
  max_concurrent_runs: number | null;
  updated_at: Date;
}

const COLUMNS =
  'project_id, external_api_enabled, default_enrollment_policy, default_on_error_policy, default_callback_url, default_callback_secret_sealed, rate_limit_per_minute, rate_limit_window_ms, max_concurrent_runs, updated_at';

/** Each project's API settings (one row per project, made with the project). */
@Injectable()
export class ProjectApiSettingsRepository {
  constructor(private readonly dataSource: DataSource) {}

  async insert(manager: EntityManager, settings: ProjectApiSettingsEntity): Promise<void> {
    await manager.query(`INSERT INTO project_api_settings (${COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`, [
      settings.projectId,
      ...changeableValues(settings),
    ]);
  }

  /** The settings, their row locked until the transaction ends. */
  async lockForUpdate(manager: EntityManager, projectId: string): Promise<ProjectApiSettingsEntity> {
    const [row]: RawSettings[] = await manager.query(`SELECT ${COLUMNS} FROM project_api_settings WHERE project_id = $1 FOR UPDATE`, [projectId]);
    if (!row) throw new Error(`project ${projectId} has no API settings`);
    return settingsOf(row);
  }

  /** Writes every setting of the row the caller locked. */
  async save(manager: EntityManager, settings: ProjectApiSettingsEntity): Promise<void> {
    await manager.query(
      `UPDATE project_api_settings
          SET external_api_enabled = $2, default_enrollment_policy = $3, default_on_error_policy = $4, default_callback_url = $5,
              default_callback_secret_sealed = $6, rate_limit_per_minute = $7, rate_limit_window_ms = $8, max_concurrent_runs = $9, updated_at = $10
        WHERE project_id = $1`,
      [settings.projectId, ...changeableValues(settings)],
    );
  }

  async of(projectId: string): Promise<ProjectApiSettingsEntity> {
    const [row]: RawSettings[] = await this.dataSource.query(`SELECT ${COLUMNS} FROM project_api_settings WHERE project_id = $1`, [projectId]);
    if (!row) throw new Error(`project ${projectId} has no API settings`);
    return settingsOf(row);
  }
}

/** The values of every column but project_id, in COLUMNS order. */
function changeableValues(settings: ProjectApiSettingsEntity): unknown[] {
  return [
    settings.externalApiEnabled,
    settings.defaultEnrollmentPolicy,
    settings.defaultOnErrorPolicy,
    settings.defaultCallbackUrl,
    settings.defaultCallbackSecretSealed,
    settings.rateLimitPerMinute,
    settings.rateLimitWindowMs,
    settings.maxConcurrentRuns,
    settings.updatedAt,
  ];
}

function settingsOf(row: RawSettings): ProjectApiSettingsEntity {
  return {
    projectId: row.project_id,
    externalApiEnabled: row.external_api_enabled,
    defaultEnrollmentPolicy: row.default_enrollment_policy,
    defaultOnErrorPolicy: row.default_on_error_policy,
    defaultCallbackUrl: row.default_callback_url,
    defaultCallbackSecretSealed: row.default_callback_secret_sealed,
    rateLimitPerMinute: row.rate_limit_per_minute,
    rateLimitWindowMs: row.rate_limit_window_ms === null ? null : Number(row.rate_limit_window_ms),
    maxConcurrentRuns: row.max_concurrent_runs,
    updatedAt: row.updated_at,
  };
}
