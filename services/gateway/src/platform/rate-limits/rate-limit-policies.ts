import { Inject, Injectable } from '@nestjs/common';
import { boundedCache, type BoundedCache } from '@runline/runtime';
import { ProjectVersions, type ProjectVersion } from '../changes/project-versions.js';
import { GatewayConfig } from '../../config.js';
import { ProjectRepository } from '../store/project.repository.js';
import { effectivePolicy, type RateLimitPolicy } from './rate-limit-policy.js';

interface Cached {
  orgId: string;
  policy: RateLimitPolicy;
  /** The project's config_version and its organization's plan_version the policy was read at. */
  version: ProjectVersion;
}

/** Projects kept at most: a flood of distinct ids evicts the least recently used rather than growing memory. */
const ENTRY_LIMIT = 100_000;

/**
 * Each project's effective rate limit (project settings, else plan, else default), held in
 * memory like AccessDirectory's entries and used only while it was read at the project's
 * current config_version (which the pipeline has just checked for this request), so a change
 * of the project's limit or of its organization's plan holds from the next request on every
 * replica.
 */
@Injectable()
export class RateLimitPolicies {
  private readonly cache: BoundedCache<string, Cached>;
  private readonly ttlMs: number;

  constructor(
    private readonly projects: ProjectRepository,
    private readonly versions: ProjectVersions,
    @Inject(GatewayConfig) config: GatewayConfig,
  ) {
    this.ttlMs = config.ACCESS_CACHE_TTL_MS;
    this.cache = boundedCache({ maxEntries: ENTRY_LIMIT, ttlMs: this.ttlMs });
  }

  /**
   * The policy as of a moment at or after `since` (performance.now(); the pipeline passes the
   * moment its own reads were current as of, so this usually costs no database read), from
   * memory when it is there.
   */
  policy(projectId: string, since: number): RateLimitPolicy | Promise<RateLimitPolicy> {
    const hit = this.cache.get(projectId);
    if (hit) {
      const known = this.versions.current(projectId, since);
      if (!(known instanceof Promise)) return sameVersion(known, hit.version) ? hit.policy : this.load(projectId);
      return known.then((current) => (sameVersion(current, hit.version) ? hit.policy : this.load(projectId)));
    }
    return this.load(projectId);
  }

  private async load(projectId: string): Promise<RateLimitPolicy> {
    const row = await this.projects.rateLimitSettingsOf(projectId);
    const unset = { limit: null, windowMs: null };
    const policy = effectivePolicy(row?.project ?? unset, row?.plan ?? unset);
    // A TTL of 0 (ACCESS_CACHE_TTL_MS) turns the cache off.
    if (this.ttlMs > 0) this.cache.set(projectId, { orgId: row?.orgId ?? '', policy, version: { config: row?.configVersion ?? 0, plan: row?.planVersion ?? 0 } });
    return policy;
  }

  evictProject(projectId: string): void {
    this.cache.delete(projectId);
  }

  evictOrganization(orgId: string): void {
    // Collected first: deleting from an LRUCache while iterating it may skip or repeat entries.
    const ofOrganization: string[] = [];
    for (const [projectId, entry] of this.cache) if (entry.orgId === orgId) ofOrganization.push(projectId);
    for (const projectId of ofOrganization) this.cache.delete(projectId);
  }
}

function sameVersion(current: ProjectVersion | null, held: ProjectVersion): boolean {
  return current !== null && current.config === held.config && current.plan === held.plan;
}
