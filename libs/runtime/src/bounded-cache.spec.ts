import type { LRUCache } from 'lru-cache';
import { boundedCache } from './bounded-cache.js';

describe('boundedCache', () => {
  it('keeps at most maxEntries, evicting the least recently used', () => {
    const cache = boundedCache<string, number>({ maxEntries: 3 });
    cache.set('a', 1).set('b', 2).set('c', 3);
    cache.get('a');
    cache.set('d', 4);
    expect([...cache.keys()].sort()).toEqual(['a', 'c', 'd']);
  });

  it('reads an entry past its TTL as missing, or as stale when asked to', async () => {
    const cache = boundedCache<string, number>({ maxEntries: 10, ttlMs: 20 });
    cache.set('a', 1);
    expect(cache.get('a')).toBe(1);
    await new Promise((resolve) => setTimeout(resolve, 40));
    const status: LRUCache.Status<string, number> = {};
    expect(cache.get('a', { allowStale: true, noDeleteOnStaleGet: true, status })).toBe(1);
    expect(status.get).toBe('stale');
    expect(cache.get('a')).toBeUndefined();
    expect(cache.size).toBe(0);
  });

  it('without a TTL, entries stay until evicted', async () => {
    const cache = boundedCache<string, number>({ maxEntries: 10, ttlMs: 0 });
    cache.set('a', 1);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(cache.get('a')).toBe(1);
  });
});
