import { Injectable } from '@nestjs/common';
import { DataSource, IsNull, type EntityManager } from 'typeorm';
import { ApiTokenEntity, type TokenScope } from './api-token.entity.js';

/** A token as the token pipeline needs it, and the project's config_version it was read at. */
export interface TokenAccessRow {
  id: string;
  orgId: string;
  projectId: string;
  scopes: TokenScope[];
  expiresAt: Date | null;
  revoked: boolean;
  configVersion: number;
}

/** API tokens (only their SHA-256 is stored). */
@Injectable()
export class ApiTokenRepository {
  constructor(private readonly dataSource: DataSource) {}

  async insert(token: ApiTokenEntity): Promise<void> {
    await this.dataSource.getRepository(ApiTokenEntity).insert(token);
  }

  /** The project's tokens that are not revoked, oldest first. */
  listLive(projectId: string): Promise<ApiTokenEntity[]> {
    return this.dataSource.getRepository(ApiTokenEntity).find({ where: { projectId, revokedAt: IsNull() }, order: { createdAt: 'ASC' } });
  }

  findLive(manager: EntityManager, id: string, projectId: string): Promise<ApiTokenEntity | null> {
    return manager.findOneBy(ApiTokenEntity, { id, projectId, revokedAt: IsNull() });
  }

  async save(manager: EntityManager, token: ApiTokenEntity): Promise<void> {
    await manager.save(ApiTokenEntity, token);
  }

  /** The token with this hash and its project's config_version; null when there is none. */
  async accessByHash(hash: string): Promise<TokenAccessRow | null> {
    const rows: Array<{
      id: string;
      org_id: string;
      project_id: string;
      scopes: TokenScope[];
      expires_at: Date | null;
      revoked_at: Date | null;
      config_version: number;
    }> = await this.dataSource.query(
      `SELECT t.id, t.org_id, t.project_id, t.scopes, t.expires_at, t.revoked_at, p.config_version
         FROM api_tokens t JOIN projects p ON p.id = t.project_id
        WHERE t.token_hash = $1`,
      [hash],
    );
    const row = rows[0];
    if (!row) return null;
    return {
      id: row.id,
      orgId: row.org_id,
      projectId: row.project_id,
      scopes: row.scopes,
      expiresAt: row.expires_at,
      revoked: row.revoked_at !== null,
      configVersion: row.config_version,
    };
  }

  /** Each token's last use, in one statement; an earlier time never overwrites a later one. */
  async recordLastUses(uses: ReadonlyMap<string, Date>): Promise<void> {
    await this.dataSource.query(
      `UPDATE api_tokens t SET last_used_at = u.used_at
         FROM unnest($1::uuid[], $2::timestamptz[]) AS u (id, used_at)
        WHERE t.id = u.id AND (t.last_used_at IS NULL OR t.last_used_at < u.used_at)`,
      [[...uses.keys()], [...uses.values()]],
    );
  }
}
