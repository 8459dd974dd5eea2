import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import type { ApiTokenEntity, TokenScope } from './api-token.entity.js';

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

interface RawToken {
  id: string;
  org_id: string;
  project_id: string;
  name: string;
  prefix: string;
  token_hash: string;
  scopes: TokenScope[];
  expires_at: Date | null;
  revoked_at: Date | null;
  last_used_at: Date | null;
  created_by: string;
  created_at: Date;
}

const COLUMNS = 'id, org_id, project_id, name, prefix, token_hash, scopes, expires_at, revoked_at, last_used_at, created_by, created_at';

/** API tokens (only their SHA-256 is stored). */
@Injectable()
export class ApiTokenRepository {
  constructor(private readonly dataSource: DataSource) {}

  async insert(token: ApiTokenEntity): Promise<void> {
    await this.dataSource.query(`INSERT INTO api_tokens (${COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7::text[], $8, $9, $10, $11, $12)`, [
      token.id,
      token.orgId,
      token.projectId,
      token.name,
      token.prefix,
      token.tokenHash,
      token.scopes,
      token.expiresAt,
      token.revokedAt,
      token.lastUsedAt,
      token.createdBy,
      token.createdAt,
    ]);
  }

  /** The project's tokens that are not revoked, oldest first. */
  async listLive(projectId: string): Promise<ApiTokenEntity[]> {
    const rows: RawToken[] = await this.dataSource.query(`SELECT ${COLUMNS} FROM api_tokens WHERE project_id = $1 AND revoked_at IS NULL ORDER BY created_at`, [projectId]);
    return rows.map(tokenOf);
  }

  /** The token if it is the project's and not revoked. */
  async findLive(manager: EntityManager, id: string, projectId: string): Promise<ApiTokenEntity | null> {
    const [row]: RawToken[] = await manager.query(`SELECT ${COLUMNS} FROM api_tokens WHERE id = $1 AND project_id = $2 AND revoked_at IS NULL`, [id, projectId]);
    return row ? tokenOf(row) : null;
  }

  /** Writes the token's revocation; nothing else of its row (its last use is recorded apart). */
  async saveRevoked(manager: EntityManager, token: ApiTokenEntity): Promise<void> {
    await manager.query('UPDATE api_tokens SET revoked_at = $2 WHERE id = $1', [token.id, token.revokedAt]);
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

function tokenOf(row: RawToken): ApiTokenEntity {
  return {
    id: row.id,
    orgId: row.org_id,
    projectId: row.project_id,
    name: row.name,
    prefix: row.prefix,
    tokenHash: row.token_hash,
    scopes: row.scopes,
    expiresAt: row.expires_at,
    revokedAt: row.revoked_at,
    lastUsedAt: row.last_used_at,
    createdBy: row.created_by,
    createdAt: row.created_at,
  };
}
