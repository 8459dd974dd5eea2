import { LRUCache } from 'lru-cache';

/** What lru-cache stores: anything but null and undefined. */
type Storable = NonNullable<unknown>;

/** An lru-cache `LRUCache`, made by `boundedCache`. */
export type BoundedCache<K extends Storable, V extends Storable> = LRUCache<K, V>;

export interface BoundedCacheOptions {
  /** Entries kept at most; a new one past this evicts the least recently used. */
  maxEntries: number;
  /** How long an entry stays fresh after it was set, in ms; 0 or omitted: it does not go stale. */
  ttlMs?: number;
}

/**
 * An LRU cache holding at most `maxEntries`, its entries stale `ttlMs` after they were set (a
 * stale entry reads as missing unless asked for with `allowStale`).
 */
export function boundedCache<K extends Storable, V extends Storable>(options: BoundedCacheOptions): BoundedCache<K, V> {
  return new LRUCache<K, V>({
    // Counted through maxSize rather than `max`, which allocates room for every entry up front
    // (3 MB of heap for 100 000): an idle service should not hold that.
    maxSize: options.maxEntries,
    sizeCalculation: () => 1,
    ...(options.ttlMs ? { ttl: options.ttlMs } : {}),
  });
}
