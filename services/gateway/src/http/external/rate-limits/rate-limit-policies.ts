import { Inject, Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { ProjectVersions, type ProjectVersion } from '../../../changes/project-versions.js';
import { GatewayConfig } from '../../../config.js';
import { effectivePolicy, type RateLimitPolicy } from './rate-limit-policy.js';

interface Cached {
  orgId: string;
  policy: RateLimitPolicy;
  expiresAt: number;
  /** The project's config_version and its organization's plan_version the policy was read at. */
  version: ProjectVersion;
}

/**
 * Each project's effective rate limit (project settings, else plan, else default), held in
 * memory like AccessDirectory's entries and used only while it was read at the project's
 * current config_version (which the pipeline has just checked for this request), so a change
 * of the project's limit or of its organization's plan holds from the next request on every
 * replica.
 */
@Injectable()
export class RateLimitPolicies {
  private readonly cache = new Map<string, Cached>();
  private readonly ttlMs: number;

  constructor(
    private readonly dataSource: DataSource,
    private readonly versions: ProjectVersions,
    @Inject(GatewayConfig) config: GatewayConfig,
  ) {
    this.ttlMs = config.ACCESS_CACHE_TTL_MS;
  }

  /**
   * The policy as of a moment at or after `since` (performance.now(); the pipeline passes the
   * moment its own reads were current as of, so this usually costs no database read), from
   * memory when it is there.
   */
  policy(projectId: string, since: number): RateLimitPolicy | Promise<RateLimitPolicy> {
    const hit = this.cache.get(projectId);
    if (hit && hit.expiresAt > Date.now()) {
      const known = this.versions.current(projectId, since);
      if (!(known instanceof Promise)) return sameVersion(known, hit.version) ? hit.policy : this.load(projectId);
      return known.then((current) => (sameVersion(current, hit.version) ? hit.policy : this.load(projectId)));
    }
    return this.load(projectId);
  }

  private async load(projectId: string): Promise<RateLimitPolicy> {
    const now = Date.now();
    const rows: Array<{
      org_id: string;
      config_version: number;
      plan_version: number;
      project_limit: number | null;
      project_window: string | null;
      plan_limit: number | null;
      plan_window: string | null;
    }> =
      await this.dataSource.query(
        `SELECT p.org_id, p.config_version, o.plan_version, s.rate_limit_per_minute AS project_limit, s.rate_limit_window_ms AS project_window,
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
    this.cache.set(projectId, { orgId: row?.org_id ?? '', policy, expiresAt: now + this.ttlMs, version: { config: row?.config_version ?? 0, plan: row?.plan_version ?? 0 } });
    return policy;
  }

  evictProject(projectId: string): void {
    this.cache.delete(projectId);
  }

  evictOrganization(orgId: string): void {
    for (const [projectId, entry] of this.cache) if (entry.orgId === orgId) this.cache.delete(projectId);
  }
}

function sameVersion(current: ProjectVersion | null, held: ProjectVersion): boolean {
  return current !== null && current.config === held.config && current.plan === held.plan;
}
