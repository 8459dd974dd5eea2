import { Inject, Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { GatewayConfig } from '../../../config.js';
import { effectivePolicy, type RateLimitPolicy } from './rate-limit-policy.js';

interface Cached {
  orgId: string;
  policy: RateLimitPolicy;
  expiresAt: number;
}

/**
 * Each project's effective rate limit (project settings, else plan, else default), held in
 * memory like AccessDirectory's entries: changes through this gateway evict at once, other
 * replicas see them within ACCESS_CACHE_TTL_MS.
 */
@Injectable()
export class RateLimitPolicies {
  private readonly cache = new Map<string, Cached>();
  private readonly ttlMs: number;

  constructor(
    private readonly dataSource: DataSource,
    @Inject(GatewayConfig) config: GatewayConfig,
  ) {
    this.ttlMs = config.ACCESS_CACHE_TTL_MS;
  }

  /** The policy, from memory when it is there (no promise to wait for on the hot path). */
  policy(projectId: string): RateLimitPolicy | Promise<RateLimitPolicy> {
    const hit = this.cache.get(projectId);
    if (hit && hit.expiresAt > Date.now()) return hit.policy;
    return this.load(projectId);
  }

  private async load(projectId: string): Promise<RateLimitPolicy> {
    const now = Date.now();
    const rows: Array<{ org_id: string; project_limit: number | null; project_window: string | null; plan_limit: number | null; plan_window: string | null }> =
      await this.dataSource.query(
        `SELECT p.org_id, s.rate_limit_per_minute AS project_limit, s.rate_limit_window_ms AS project_window,
                o.rate_limit_per_minute AS plan_limit, o.rate_limit_window_ms AS plan_window
           FROM projects p JOIN organizations o ON o.id = p.org_id LEFT JOIN project_api_settings s ON s.project_id = p.id
          WHERE p.id = $1`,
        [projectId],
      );
    const row = rows[0];
    const number = (value: string | number | null | undefined) => (value === null || value === undefined ? null : Number(value));
    const policy = effectivePolicy(
      { limit: number(row?.project_limit), windowMs: number(row?.project_window) },
      { limit: number(row?.plan_limit), windowMs: number(row?.plan_window) },
    );
    if (this.cache.size > 100_000) this.cache.clear();
    this.cache.set(projectId, { orgId: row?.org_id ?? '', policy, expiresAt: now + this.ttlMs });
    return policy;
  }

  evictProject(projectId: string): void {
    this.cache.delete(projectId);
  }

  evictOrganization(orgId: string): void {
    for (const [projectId, entry] of this.cache) if (entry.orgId === orgId) this.cache.delete(projectId);
  }
}
