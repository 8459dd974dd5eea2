import { Inject, Injectable, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import type { Logger } from '@runline/observability';
import { LOGGER } from '@runline/runtime';
import { RateLimitCounterRepository } from './rate-limit-counter.repository.js';
import type { Tally } from './rate-limit-policy.js';

/** One request to count: the token, the endpoint and the limit it is held to. */
export interface Hit {
  tokenId: string;
  endpoint: string;
  limit: number;
  windowMs: number;
}

interface Pending {
  hit: Hit;
  /** Undefined for a refill: places taken ahead for requests still to come. */
  resolve?: (tally: Tally | null) => void;
}

/**
 * Places this replica holds in one window of one counter: the `free` ranges (first..last) are
 * still to hand out; once the database said the window is full, every further request there is
 * refused locally. `seen` is the highest count the database answered.
 */
interface Lease {
  limit: number;
  windowIndex: number;
  resetAtMs: number;
  free: Array<{ next: number; last: number }>;
  seen: number;
  full: boolean;
  /** A block is being fetched ahead of demand. */
  refilling: boolean;
}

/** Statements in flight at once; the next batch fills while they run. */
const MAX_IN_FLIGHT = 2;
const MAX_BATCH = 512;
/**
 * Places taken ahead of demand: a 16th of what is left of the window, at most 100. Far from the
 * limit one statement serves many requests; near it, blocks shrink to what is asked for.
 */
const PREFETCH_SHARE = 16;
const MAX_PREFETCH = 100;
const SWEEP_INTERVAL_MS = 60_000;

/**
 * The shared counters of the rate limits, in the gateway's PostgreSQL schema, so every
 * replica is held to the same limit (the spec allows per-instance counts; we do better).
 *
 * Every admitted request has its own place (1, 2, …, limit) in its window. A replica takes
 * places from the database in blocks with one atomic upsert, which never hands out more than
 * the limit: the total let through by all replicas never exceeds it. A block is what is asked
 * for right now (the requests waiting), plus, while the window is far from full, a few places
 * ahead; those are handed out from memory with no database call. Once the database answers
 * that the window is full, the replica refuses the rest of the window without asking again.
 * The cost: places one replica took ahead and did not use are lost to the others for that
 * window (at most a 16th of what was left, and never more than 100).
 *
 * Windows are cut on the database's clock, which all replicas share; each replica keeps its
 * offset to it. When the database cannot count, requests pass uncounted (null) and a warning
 * is logged: a limiter outage should not become an API outage.
 */
@Injectable()
export class RateLimitCounters implements OnModuleInit, OnApplicationShutdown {
  private queue: Pending[] = [];
  private inFlight = 0;
  private readonly leases = new Map<string, Lease>();
  /** The database's clock minus ours, ms, as last measured. */
  private clockOffsetMs = 0;
  private sweeper: NodeJS.Timeout | undefined;

  constructor(
    private readonly repository: RateLimitCounterRepository,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  onModuleInit(): void {
    this.sweeper = setInterval(() => void this.sweep(), SWEEP_INTERVAL_MS);
    this.sweeper.unref();
  }

  onApplicationShutdown(): void {
    clearInterval(this.sweeper);
  }

  /**
   * Counts one request: its place in the window (above the limit: refused), or null when it
   * could not be counted. Answered from memory when this replica holds places (the usual case).
   */
  count(hit: Hit): Tally | Promise<Tally | null> {
    const local = this.fromLease(hit);
    if (local) return local;
    return new Promise((resolve) => {
      this.queue.push({ hit, resolve });
      this.flush();
    });
  }

  /** A place from this replica's lease, or the refusal of a full window; undefined: ask the database. */
  private fromLease(hit: Hit): Tally | undefined {
    const lease = this.leases.get(keyOf(hit));
    if (!lease || lease.limit !== hit.limit) return undefined;
    const nowMs = Date.now() + this.clockOffsetMs;
    if (Math.floor(nowMs / hit.windowMs) !== lease.windowIndex) return undefined;
    const place = takePlace(lease);
    if (place !== undefined) {
      // Running low while the window is far from full: fetch the next block before it is needed.
      if (!lease.refilling && !lease.full && freePlaces(lease) < MAX_PREFETCH / 4 && this.prefetch(hit) >= MAX_PREFETCH / 2) {
        lease.refilling = true;
        this.queue.push({ hit });
        this.flush();
      }
      return { count: place, resetAtMs: lease.resetAtMs, nowMs };
    }
    if (lease.full) return { count: hit.limit + 1, resetAtMs: lease.resetAtMs, nowMs };
    return undefined;
  }

  private flush(): void {
    while (this.inFlight < MAX_IN_FLIGHT && this.queue.length > 0) {
      const batch = this.queue.splice(0, MAX_BATCH);
      this.inFlight++;
      void this.write(batch).finally(() => {
        this.inFlight--;
        this.flush();
      });
    }
  }

  private async write(batch: Pending[]): Promise<void> {
    const groups = new Map<string, { hit: Hit; waiting: Pending[] }>();
    for (const pending of batch) {
      // A block that arrived while this request waited may already hold its place.
      const local = pending.resolve ? this.fromLease(pending.hit) : undefined;
      if (local) {
        pending.resolve?.(local);
        continue;
      }
      const key = keyOf(pending.hit);
      const group = groups.get(key) ?? { hit: pending.hit, waiting: [] };
      group.waiting.push(pending);
      groups.set(key, group);
    }
    if (groups.size === 0) return;
    const asks = [...groups.values()].map((group) => ({
      ...group,
      block: group.waiting.filter((pending) => pending.resolve).length + this.prefetch(group.hit),
    }));
    try {
      const sentAt = Date.now();
      const rows = await this.repository.take(
        asks.map((ask) => ({ tokenId: ask.hit.tokenId, endpoint: ask.hit.endpoint, windowMs: ask.hit.windowMs, limit: ask.hit.limit, block: ask.block })),
      );
      const receivedAt = Date.now();
      for (const row of rows) {
        const key = keyOf(row);
        const group = groups.get(key);
        if (!group) continue;
        groups.delete(key);
        const { nowMs, windowIndex } = row;
        this.clockOffsetMs = nowMs - (sentAt + receivedAt) / 2;
        // Places of an earlier block of the same window (two statements may be in flight) are kept.
        const earlier = this.leases.get(key);
        const lease: Lease =
          earlier && earlier.windowIndex === windowIndex && earlier.limit === group.hit.limit
            ? earlier
            : { limit: group.hit.limit, windowIndex, resetAtMs: (windowIndex + 1) * row.windowMs, free: [], seen: 0, full: false, refilling: false };
        lease.refilling = false;
        if (row.lastGrant > 0) lease.free.push({ next: row.count - row.lastGrant + 1, last: row.count });
        lease.seen = Math.max(lease.seen, row.count);
        lease.full = lease.full || row.count >= group.hit.limit;
        for (const pending of group.waiting) {
          pending.resolve?.({ count: takePlace(lease) ?? group.hit.limit + 1, resetAtMs: lease.resetAtMs, nowMs });
        }
        this.leases.set(key, lease);
      }
      if (groups.size > 0) throw new Error(`${groups.size} rate limit counters were not returned`);
    } catch (error) {
      this.logger.warn({ err: error }, 'rate limit counters unavailable; requests pass uncounted');
      for (const group of groups.values()) {
        const lease = this.leases.get(keyOf(group.hit));
        if (lease) lease.refilling = false;
        for (const pending of group.waiting) pending.resolve?.(null);
      }
    }
  }

  /** Places to take ahead of demand, from what this replica last saw of the window. */
  private prefetch(hit: Hit): number {
    const lease = this.leases.get(keyOf(hit));
    if (!lease || lease.limit !== hit.limit || Math.floor((Date.now() + this.clockOffsetMs) / hit.windowMs) !== lease.windowIndex) return 0;
    return Math.min(MAX_PREFETCH, Math.floor((hit.limit - lease.seen) / PREFETCH_SHARE));
  }

  /** Drops windows that ended more than a minute ago, here and in the table (any replica may). */
  async sweep(): Promise<void> {
    const nowMs = Date.now() + this.clockOffsetMs;
    for (const [key, lease] of this.leases) if (lease.resetAtMs < nowMs) this.leases.delete(key);
    try {
      await this.repository.deleteEnded();
    } catch (error) {
      this.logger.warn({ err: error }, 'could not sweep old rate limit windows');
    }
  }
}

function freePlaces(lease: Lease): number {
  return lease.free.reduce((sum, range) => sum + range.last - range.next + 1, 0);
}

function takePlace(lease: Lease): number | undefined {
  const range = lease.free[0];
  if (!range) return undefined;
  const place = range.next++;
  if (range.next > range.last) lease.free.shift();
  return place;
}

function keyOf(hit: Pick<Hit, 'tokenId' | 'endpoint' | 'windowMs'>): string {
  return `${hit.tokenId}|${hit.endpoint}|${hit.windowMs}`;
}
