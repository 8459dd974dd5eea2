import { Inject, Injectable } from '@nestjs/common';
import { Counter, type Registry } from 'prom-client';
import { boundedCache, METRICS_REGISTRY, type BoundedCache } from '@runline/runtime';
import { ProjectVersions } from '../changes/project-versions.js';
import { GatewayConfig } from '../../config.js';
import type { TokenScope } from '../store/api-token.entity.js';
import type { ProjectType } from '../store/project.entity.js';
import { ApiTokenRepository } from '../store/api-token.repository.js';
import { ProjectRepository } from '../store/project.repository.js';

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
  /** The project's configuration version this record was read at. */
  configVersion: number;
}

interface Cached<T> {
  value: T | null;
  /** The config_version of the project the entry belongs to, when it was read; null: none. */
  version: number | null;
}

/** Entries kept per cache: a flood of distinct keys evicts the least recently used rather than growing memory. */
const ENTRY_LIMIT = 100_000;

/**
 * What the external pipeline reads on every call (the token by its hash, the project and its
 * master switch), held in memory. Every entry carries the project's config_version it was read
 * at, and is used only while that is still the project's version in the database
 * (ProjectVersions: one small batched read), so a change answered by any replica (a revoked
 * token, the master switch, a publish, a deletion) is in force for the next call on every
 * replica. Changes made through this gateway also evict their entries at once. The TTL
 * (GatewayConfig.ACCESS_CACHE_TTL_MS) bounds memory, not staleness.
 */
@Injectable()
export class AccessDirectory {
  private readonly tokens: BoundedCache<string, Cached<TokenRecord>>;
  private readonly projects: BoundedCache<string, Cached<ProjectRecord>>;
  private readonly ttlMs: number;
  private readonly databaseReads: Counter<'kind'>;

  constructor(
    private readonly apiTokenRepository: ApiTokenRepository,
    private readonly projectRepository: ProjectRepository,
    private readonly versions: ProjectVersions,
    @Inject(GatewayConfig) config: GatewayConfig,
    @Inject(METRICS_REGISTRY) registry: Registry,
  ) {
    this.ttlMs = config.ACCESS_CACHE_TTL_MS;
    this.tokens = boundedCache({ maxEntries: ENTRY_LIMIT, ttlMs: this.ttlMs });
    this.projects = boundedCache({ maxEntries: ENTRY_LIMIT, ttlMs: this.ttlMs });
    this.databaseReads = new Counter({
      name: 'runline_gateway_access_reads_total',
      help: 'Database reads by the external pipeline (cache misses), by kind.',
      labelNames: ['kind'],
      registers: [registry],
    });
  }

  /**
   * The token with this hash, as of a moment at or after `since` (performance.now(); pass the
   * same value to `project` in one request so both share one version read).
   */
  async tokenByHash(hash: string, since = performance.now()): Promise<TokenRecord | null> {
    return this.cached(this.tokens, hash, since, (token) => token.projectId, async () => {
      this.databaseReads.inc({ kind: 'token' });
      const row = await this.apiTokenRepository.accessByHash(hash);
      if (!row) return { value: null, version: null };
      const { configVersion, ...token } = row;
      return { value: token, version: configVersion };
    });
  }

  /** The project, as of a moment at or after `since` (see `tokenByHash`); null when it does not exist. */
  async project(projectId: string, since = performance.now()): Promise<ProjectRecord | null> {
    return this.cached(this.projects, projectId, since, (project) => project.id, async () => {
      this.databaseReads.inc({ kind: 'project' });
      const project = await this.projectRepository.accessOf(projectId);
      return { value: project, version: project?.configVersion ?? null };
    });
  }

  evictToken(hash: string): void {
    this.tokens.delete(hash);
  }

  evictTokensOfProject(projectId: string): void {
    // Collected first: deleting from an LRUCache while iterating it may skip or repeat entries.
    const ofProject: string[] = [];
    for (const [hash, entry] of this.tokens) if (entry.value?.projectId === projectId) ofProject.push(hash);
    for (const hash of ofProject) this.tokens.delete(hash);
  }

  evictProject(projectId: string): void {
    this.projects.delete(projectId);
  }

  private async cached<T>(
    cache: BoundedCache<string, Cached<T>>,
    key: string,
    since: number,
    projectOf: (value: T) => string,
    load: () => Promise<{ value: T | null; version: number | null }>,
  ): Promise<T | null> {
    const hit = cache.get(key);
    if (hit) {
      // A miss (null) stays cached only for the TTL: nothing it depends on has a version.
      if (hit.value === null) return null;
      const known = this.versions.current(projectOf(hit.value), since);
      const current = known instanceof Promise ? await known : known;
      if (current?.config === hit.version) return hit.value;
    }
    const loaded = await load();
    // A TTL of 0 turns the cache off.
    if (this.ttlMs > 0) cache.set(key, { value: loaded.value, version: loaded.version });
    return loaded.value;
  }
}
