import { Inject, Injectable } from '@nestjs/common';
import { Counter, type Registry } from 'prom-client';
import { DataSource } from 'typeorm';
import { METRICS_REGISTRY } from '@runline/runtime';
import { GatewayConfig } from '../../config.js';
import type { TokenScope } from '../../entities/api-token.entity.js';
import type { ProjectType } from '../../entities/project.entity.js';

export interface TokenRecord {
  id: string;
  orgId: string;
  projectId: string;
  scopes: readonly TokenScope[];
  expiresAt: Date | null;
  revoked: boolean;
}

export interface ProjectRecord {
  id: string;
  orgId: string;
  type: ProjectType;
  deleted: boolean;
  externalApiEnabled: boolean;
  /** The last published version (0 = never published); runs ask for at least this version. */
  publishedVersion: number;
}

interface Cached<T> {
  value: T | null;
  expiresAt: number;
}

/**
 * What the external pipeline reads on every call (the token by its hash, the project and its
 * master switch), held briefly in memory so a call costs no database read. Changes made through
 * this gateway evict their entries at once; other gateway replicas see a change within the TTL
 * (GatewayConfig.ACCESS_CACHE_TTL_MS, default 2 s), which bounds how long a revoked token can still work there.
 */
@Injectable()
export class AccessDirectory {
  private readonly tokens = new Map<string, Cached<TokenRecord>>();
  private readonly projects = new Map<string, Cached<ProjectRecord>>();
  private readonly ttlMs: number;
  private readonly databaseReads: Counter<'kind'>;

  constructor(
    private readonly dataSource: DataSource,
    @Inject(GatewayConfig) config: GatewayConfig,
    @Inject(METRICS_REGISTRY) registry: Registry,
  ) {
    this.ttlMs = config.ACCESS_CACHE_TTL_MS;
    this.databaseReads = new Counter({
      name: 'runline_gateway_access_reads_total',
      help: 'Database reads by the external pipeline (cache misses), by kind.',
      labelNames: ['kind'],
      registers: [registry],
    });
  }

  async tokenByHash(hash: string): Promise<TokenRecord | null> {
    return this.cached(this.tokens, hash, async () => {
      this.databaseReads.inc({ kind: 'token' });
      const rows: Array<{ id: string; org_id: string; project_id: string; scopes: TokenScope[]; expires_at: Date | null; revoked_at: Date | null }> =
        await this.dataSource.query(
          'SELECT id, org_id, project_id, scopes, expires_at, revoked_at FROM api_tokens WHERE token_hash = $1',
          [hash],
        );
      const row = rows[0];
      return row
        ? { id: row.id, orgId: row.org_id, projectId: row.project_id, scopes: row.scopes, expiresAt: row.expires_at, revoked: row.revoked_at !== null }
        : null;
    });
  }

  async project(projectId: string): Promise<ProjectRecord | null> {
    return this.cached(this.projects, projectId, async () => {
      this.databaseReads.inc({ kind: 'project' });
      const rows: Array<{
        id: string;
        org_id: string;
        type: ProjectType;
        deleted_at: Date | null;
        external_api_enabled: boolean | null;
        published_version: number;
      }> =
        await this.dataSource.query(
          `SELECT p.id, p.org_id, p.type, p.deleted_at, s.external_api_enabled, p.published_version
             FROM projects p LEFT JOIN project_api_settings s ON s.project_id = p.id
            WHERE p.id = $1`,
          [projectId],
        );
      const row = rows[0];
      return row
        ? {
            id: row.id,
            orgId: row.org_id,
            type: row.type,
            deleted: row.deleted_at !== null,
            externalApiEnabled: row.external_api_enabled ?? true,
            publishedVersion: row.published_version,
          }
        : null;
    });
  }

  evictToken(hash: string): void {
    this.tokens.delete(hash);
  }

  evictTokensOfProject(projectId: string): void {
    for (const [hash, entry] of this.tokens) if (entry.value?.projectId === projectId) this.tokens.delete(hash);
  }

  evictProject(projectId: string): void {
    this.projects.delete(projectId);
  }

  private async cached<T>(cache: Map<string, Cached<T>>, key: string, load: () => Promise<T | null>): Promise<T | null> {
    const now = Date.now();
    const hit = cache.get(key);
    if (hit && hit.expiresAt > now) return hit.value;
    const value = await load();
    if (cache.size > 100_000) cache.clear(); // bound memory under a flood of distinct keys
    cache.set(key, { value, expiresAt: now + this.ttlMs });
    return value;
  }
}
