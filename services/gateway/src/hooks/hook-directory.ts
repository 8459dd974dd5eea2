import { Inject, Injectable } from '@nestjs/common';
import { Counter, type Registry } from 'prom-client';
import {
  create,
  fromBinary,
  GetHookForGatewayReplySchema,
  GetHookForGatewayRequestSchema,
  toBinary,
  WEBHOOK_QUERY_SUBJECTS,
  type InboundHookCopy,
} from '@runline/contracts';
import { boundedCache, METRICS_REGISTRY, type BoundedCache } from '@runline/runtime';
import { ProjectVersions, type ProjectVersion } from '../platform/changes/project-versions.js';
import { GatewayConfig } from '../config.js';
import { DomainError } from '../platform/errors/domain-error.js';
import { ServiceClient } from '../platform/service-client/service-client.js';

/** An inbound hook as the gateway verifies its deliveries. */
export interface HookRecord {
  id: string;
  orgId: string;
  projectId: string;
  name: string;
  /** Sealed with SECRETS_KEY (SecretBox); opened only to check a delivery, never logged. */
  sealedSecret: string;
  status: 'ACTIVE' | 'REVOKED';
  rateLimitPerMinute: number;
  /** How far X-Runline-Timestamp may be from the time of receipt, in seconds (the webhook service's setting). */
  timestampToleranceSeconds: number;
}

interface Entry {
  /** null: no inbound hook has this id. */
  hook: HookRecord | null;
  /** The project's config_version read before the hook was loaded; null for no hook (or no project). */
  version: number | null;
}

/** Copies kept at most: a flood of distinct ids evicts the least recently used rather than growing memory. */
const ENTRY_LIMIT = 100_000;

/**
 * The gateway's copies of inbound hooks (DESIGN section 9's "projected copy"), so a delivery to a
 * hook is verified here with no request to the webhook service and no read of our own while the
 * copy is current, as AccessDirectory does for tokens and projects.
 *
 * Each copy is tagged with its project's config_version read *before* the copy was loaded, and
 * is used only while ProjectVersions still reads that version (the one batched read the
 * delivery shares with its project lookup: pass the same `since`). Revoking a hook commits a new
 * version after the webhook service has revoked it, so a copy loaded before the revocation is
 * stale on every replica for the next delivery, and one loaded after it already says REVOKED.
 *
 * A miss loads the hook from the webhook service (GetHookForGateway). An id never seen before
 * is loaded twice: the first answer names the hook's project, whose version is then read, and
 * the second is the copy kept (a hook revoked between the two loads is seen as revoked, or its
 * new version makes the copy stale). An id with no hook is remembered as such for the TTL only:
 * nothing versions it, and the webhook service still checks such ids itself (VerifyDelivery).
 *
 * The TTL (ACCESS_CACHE_TTL_MS) bounds memory and how long a change that bypassed the version
 * (a revocation through a gateway of an earlier release) can go unseen. When the webhook service
 * does not answer, a copy past its TTL whose version is still current is used rather than
 * refusing the delivery: the version, not the age, is what makes a copy correct.
 */
@Injectable()
export class HookDirectory {
  private readonly entries: BoundedCache<string, Entry>;
  private readonly ttlMs: number;
  private readonly loads: Counter;

  constructor(
    private readonly services: ServiceClient,
    private readonly versions: ProjectVersions,
    @Inject(GatewayConfig) config: GatewayConfig,
    @Inject(METRICS_REGISTRY) registry: Registry,
  ) {
    this.ttlMs = config.ACCESS_CACHE_TTL_MS;
    this.entries = boundedCache<string, Entry>({ maxEntries: ENTRY_LIMIT, ttlMs: this.ttlMs });
    this.loads = new Counter({
      name: 'runline_gateway_hook_loads_total',
      help: 'Inbound hooks loaded from the webhook service (copies missing, stale or past their TTL).',
      registers: [registry],
    });
  }

  /**
   * The inbound hook with this id, as of a moment at or after `since` (performance.now(), at the
   * latest when the delivery arrived); null when no inbound hook has this id.
   */
  async hook(hookId: string, since: number): Promise<HookRecord | null> {
    const id = hookId.toLowerCase();
    // A copy past its TTL is kept: it stands in while the webhook service does not answer.
    const entry = this.entries.get(id, { allowStale: true, noDeleteOnStaleGet: true });
    // A TTL of 0 turns the cache off: no copy is ever live.
    const live = entry !== undefined && this.ttlMs > 0 && this.entries.getRemainingTTL(id) > 0;
    if (live && entry.hook === null) return null;

    if (entry?.hook) {
      const current = await this.versionOf(entry.hook.projectId, since);
      const unchanged = current?.config === entry.version;
      if (live && unchanged) return entry.hook;
      try {
        return await this.load(id, current);
      } catch (error) {
        if (unchanged && error instanceof DomainError && error.kind === 'unavailable') return entry.hook;
        throw error;
      }
    }

    const first = await this.fetch(id);
    if (!first) return this.keep(id, null, null);
    return this.load(id, await this.versionOf(first.projectId, since));
  }

  /** Forgets the copy at once (a change made through this gateway); other replicas see the change through the version. */
  evict(hookId: string): void {
    this.entries.delete(hookId.toLowerCase());
  }

  /** Loads the copy and keeps it tagged with `version`, which must have been read before this call. */
  private async load(id: string, version: ProjectVersion | null): Promise<HookRecord | null> {
    const hook = await this.fetch(id);
    return this.keep(id, hook, hook ? (version?.config ?? null) : null);
  }

  private keep(id: string, hook: HookRecord | null, version: number | null): HookRecord | null {
    this.entries.set(id, { hook, version });
    return hook;
  }

  private async versionOf(projectId: string, since: number): Promise<ProjectVersion | null> {
    const known = this.versions.current(projectId, since);
    return known instanceof Promise ? await known : known;
  }

  private async fetch(id: string): Promise<HookRecord | null> {
    this.loads.inc();
    const request = toBinary(GetHookForGatewayRequestSchema, create(GetHookForGatewayRequestSchema, { hookId: id }));
    const reply = fromBinary(GetHookForGatewayReplySchema, await this.services.request('webhook', WEBHOOK_QUERY_SUBJECTS.GET_HOOK_FOR_GATEWAY, request));
    return reply.hook ? hookRecordOf(reply.hook) : null;
  }
}

function hookRecordOf(copy: InboundHookCopy): HookRecord {
  return {
    id: copy.id,
    orgId: copy.orgId,
    projectId: copy.projectId,
    name: copy.name,
    sealedSecret: copy.sealedSecret,
    // A status this release does not know takes no deliveries.
    status: copy.status === 'ACTIVE' ? 'ACTIVE' : 'REVOKED',
    rateLimitPerMinute: copy.rateLimitPerMinute,
    timestampToleranceSeconds: copy.timestampToleranceSeconds,
  };
}
