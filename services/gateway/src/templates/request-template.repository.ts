import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { isUuid } from '@runline/contracts';
import { returningRows } from '@runline/db';
import { RequestTemplateEntity } from './request-template.entity.js';

/** The template library of each project. */
@Injectable()
export class RequestTemplateRepository {
  constructor(private readonly dataSource: DataSource) {}

  /** The project's templates, oldest first. */
  list(projectId: string): Promise<RequestTemplateEntity[]> {
    return this.dataSource.getRepository(RequestTemplateEntity).find({ where: { projectId }, order: { createdAt: 'ASC', id: 'ASC' } });
  }

  /** The template if it is the project's; null otherwise (an id of another project included). */
  find(projectId: string, id: string): Promise<RequestTemplateEntity | null> {
    if (!isUuid(id)) return Promise.resolve(null);
    return this.dataSource.getRepository(RequestTemplateEntity).findOneBy({ id, projectId });
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
        `INSERT INTO request_templates (id, project_id, name, endpoint, body, created_at, updated_at) VALUES ($1, $2, $3, $4, $5::json, $6, $7)`,
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
    const result = await this.dataSource.getRepository(RequestTemplateEntity).delete({ id, projectId });
    return (result.affected ?? 0) > 0;
  }
}
