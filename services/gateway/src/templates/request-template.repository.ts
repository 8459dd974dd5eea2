import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { isUuid } from '@runline/contracts';
import { returningRows } from '@runline/db';
import type { RequestTemplateEntity } from './request-template.entity.js';
import type { RunEndpoint } from './run-endpoints.js';

interface RawTemplate {
  id: string;
  project_id: string;
  name: string;
  endpoint: RunEndpoint;
  body: Record<string, unknown>;
  created_at: Date;
  updated_at: Date;
}

const COLUMNS = 'id, project_id, name, endpoint, body, created_at, updated_at';

/** The template library of each project. */
@Injectable()
export class RequestTemplateRepository {
  constructor(private readonly dataSource: DataSource) {}

  /** The project's templates, oldest first. */
  async list(projectId: string): Promise<RequestTemplateEntity[]> {
    const rows: RawTemplate[] = await this.dataSource.query(`SELECT ${COLUMNS} FROM request_templates WHERE project_id = $1 ORDER BY created_at, id`, [projectId]);
    return rows.map(templateOf);
  }

  /** The template if it is the project's; null otherwise (an id of another project included). */
  async find(projectId: string, id: string): Promise<RequestTemplateEntity | null> {
    if (!isUuid(id)) return null;
    const [row]: RawTemplate[] = await this.dataSource.query(`SELECT ${COLUMNS} FROM request_templates WHERE id = $1 AND project_id = $2`, [id, projectId]);
    return row ? templateOf(row) : null;
  }

  /**
   * Inserts the template unless the project already holds `limit`; false then. The count and
   * the insert are serialised per project (a transaction-scoped advisory lock), so concurrent
   * creates never pass the limit together.
   */
  insertWithin(template: RequestTemplateEntity, limit: number): Promise<boolean> {
    return this.dataSource.transaction(async (manager) => {
      await manager.query(`SELECT pg_advisory_xact_lock(hashtextextended('request_templates:' || $1::text, 0))`, [template.projectId]);
      const [row]: Array<{ count: string }> = await manager.query('SELECT count(*) FROM request_templates WHERE project_id = $1', [template.projectId]);
      if (Number(row!.count) >= limit) return false;
      await manager.query(
        `INSERT INTO request_templates (${COLUMNS}) VALUES ($1, $2, $3, $4, $5::json, $6, $7)`,
        [template.id, template.projectId, template.name, template.endpoint, JSON.stringify(template.body), template.createdAt, template.updatedAt],
      );
      return true;
    });
  }

  /** Replaces the template's fields; the updated row, or null when it is not the project's. */
  async update(projectId: string, id: string, fields: Pick<RequestTemplateEntity, 'name' | 'endpoint' | 'body' | 'updatedAt'>): Promise<RequestTemplateEntity | null> {
    if (!isUuid(id)) return null;
    const rows = returningRows<{ id: string }>(
      await this.dataSource.query(
        `UPDATE request_templates SET name = $3, endpoint = $4, body = $5::json, updated_at = $6 WHERE id = $1 AND project_id = $2 RETURNING id`,
        [id, projectId, fields.name, fields.endpoint, JSON.stringify(fields.body), fields.updatedAt],
      ),
    );
    return rows.length > 0 ? this.find(projectId, id) : null;
  }

  /** False when there was no such template in the project. */
  async delete(projectId: string, id: string): Promise<boolean> {
    if (!isUuid(id)) return false;
    const rows = returningRows<{ id: string }>(await this.dataSource.query('DELETE FROM request_templates WHERE id = $1 AND project_id = $2 RETURNING id', [id, projectId]));
    return rows.length > 0;
  }
}

function templateOf(row: RawTemplate): RequestTemplateEntity {
  return {
    id: row.id,
    projectId: row.project_id,
    name: row.name,
    endpoint: row.endpoint,
    body: row.body,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}
