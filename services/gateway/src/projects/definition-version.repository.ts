import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';

/** One published version of a project's definition: what it was, who published it, when. */
export interface DefinitionVersionEntity {
  projectId: string;
  version: number;
  definition: object;
  /** The console user who published it; null for versions published before history was kept. */
  publishedBy: string | null;
  publishedAt: Date;
}

interface RawVersion {
  project_id: string;
  version: number;
  definition: object;
  published_by: string | null;
  published_at: Date;
}

/** Versions kept per project, newest first; the history reads at most this many at once. */
export const DEFINITION_HISTORY_LIMIT = 100;

/** The published versions of each project's definition (the version history). */
@Injectable()
export class DefinitionVersionRepository {
  constructor(private readonly dataSource: DataSource) {}

  /**
   * Records a published version inside the publish's transaction. Publishing an unchanged
   * draft again publishes the same number: the first record of it stays (who published it first, when).
   */
  async record(manager: EntityManager, version: DefinitionVersionEntity): Promise<void> {
    await manager.query(
      `INSERT INTO definition_versions (project_id, version, definition, published_by, published_at)
       VALUES ($1, $2, $3::json, $4, $5) ON CONFLICT (project_id, version) DO NOTHING`,
      [version.projectId, version.version, JSON.stringify(version.definition), version.publishedBy, version.publishedAt],
    );
  }

  /** The newest versions first, without their documents. */
  async history(projectId: string): Promise<Array<Omit<DefinitionVersionEntity, 'definition'>>> {
    const rows: Array<Omit<RawVersion, 'definition'>> = await this.dataSource.query(
      `SELECT project_id, version, published_by, published_at FROM definition_versions
        WHERE project_id = $1 ORDER BY version DESC LIMIT $2`,
      [projectId, DEFINITION_HISTORY_LIMIT],
    );
    return rows.map((row) => ({ projectId: row.project_id, version: row.version, publishedBy: row.published_by, publishedAt: row.published_at }));
  }

  async find(projectId: string, version: number): Promise<DefinitionVersionEntity | null> {
    const [row]: RawVersion[] = await this.dataSource.query(
      'SELECT project_id, version, definition, published_by, published_at FROM definition_versions WHERE project_id = $1 AND version = $2',
      [projectId, version],
    );
    return row ? { projectId: row.project_id, version: row.version, definition: row.definition, publishedBy: row.published_by, publishedAt: row.published_at } : null;
  }
}
