import { randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { createServiceDataSource } from '@runline/db';
import { createLogger } from '@runline/observability';
import { migrateServices } from '@runline/runtime';
import { createTestDatabase, type TestDatabase } from '@runline/testing';
import { gatewayService } from '../src/gateway.service.js';
import { RateLimitCounters, type Hit } from '../src/platform/rate-limits/rate-limit-counters.js';
import type { Tally } from '../src/platform/rate-limits/rate-limit-policy.js';
import { RateLimitCounterRepository } from '../src/platform/rate-limits/rate-limit-counter.repository.js';

/**
 * The shared counters on a real PostgreSQL, with two instances standing for two gateway
 * replicas: never more than the limit let through, one place per admitted request, and places
 * taken ahead of demand cost at most what the design allows.
 */
describe('rate limit counters (two replicas, one database)', () => {
  let database: TestDatabase;
  const dataSources: DataSource[] = [];
  let replicas: [RateLimitCounters, RateLimitCounters];

  beforeAll(async () => {
    database = await createTestDatabase();
    await migrateServices([gatewayService], database.url);
    const logger = createLogger({ service: 'test', level: 'silent' });
    const make = async () => {
      const dataSource = createServiceDataSource({ url: database.url, schema: 'gateway', migrations: [] });
      await dataSource.initialize();
      dataSources.push(dataSource);
      return new RateLimitCounters(new RateLimitCounterRepository(dataSource), logger);
    };
    replicas = [await make(), await make()];
  });
  afterAll(async () => {
    for (const dataSource of dataSources) await dataSource.destroy();
    await database?.drop();
  });

  /** `total` requests, alternating between the replicas, `concurrency` at a time on each. */
  async function burst(hit: Hit, total: number, concurrency = 20): Promise<Tally[]> {
    const tallies: Tally[] = [];
    let sent = 0;
    await Promise.all(
      Array.from({ length: concurrency * 2 }, async (_, worker) => {
        while (sent < total) {
          sent++;
          const tally = await replicas[worker % 2]!.count(hit);
          if (!tally) throw new Error('not counted');
          tallies.push(tally);
        }
      }),
    );
    return tallies;
  }

  it('lets exactly the limit through when it is small, with places 1..limit', async () => {
    const hit: Hit = { tokenId: randomUUID(), endpoint: 'flows/trigger', limit: 10, windowMs: 3_600_000 };
    const tallies = await burst(hit, 60);
    const places = tallies.filter((tally) => tally.count <= hit.limit).map((tally) => tally.count).sort((a, b) => a - b);
    expect(places).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(tallies.filter((tally) => tally.count > hit.limit)).toHaveLength(50);
  });

  it('never exceeds a large limit while taking places ahead, and loses at most a 16th of it per replica', async () => {
    const hit: Hit = { tokenId: randomUUID(), endpoint: 'flows/trigger-async', limit: 2000, windowMs: 3_600_000 };
    const tallies = await burst(hit, 5000);
    const admitted = tallies.filter((tally) => tally.count <= hit.limit);
    expect(admitted.length).toBeLessThanOrEqual(2000);
    expect(admitted.length).toBeGreaterThanOrEqual(2000 - 2 * 100);
    expect(new Set(admitted.map((tally) => tally.count)).size).toBe(admitted.length);
    const rows = await dataSources[0]!.query('SELECT count FROM rate_limit_counters WHERE token_id = $1', [hit.tokenId]);
    expect(rows).toEqual([{ count: 2000 }]);
  });

  it('counts each endpoint and each token on its own', async () => {
    const tokenId = randomUUID();
    const sync: Hit = { tokenId, endpoint: 'bots/message', limit: 3, windowMs: 60_000 };
    const async: Hit = { ...sync, endpoint: 'bots/invoke' };
    const other: Hit = { ...sync, tokenId: randomUUID() };
    for (const hit of [sync, async, other]) {
      const tallies = await burst(hit, 5, 1);
      expect(tallies.map((tally) => tally.count).sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 4]);
    }
  });

  it('cuts windows on the database clock: the reset is the end of the current window', async () => {
    const hit: Hit = { tokenId: randomUUID(), endpoint: 'flows/trigger', limit: 5, windowMs: 7000 };
    // The database clock read before and after the count: the count's own reading lies between,
    // however long the calls take.
    const clock = async () =>
      Number((await dataSources[0]!.query(`SELECT (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS now`))[0].now);
    const before = await clock();
    const tally = (await replicas[0].count(hit))!;
    const after = await clock();
    expect(tally.resetAtMs % 7000).toBe(0);
    expect(tally.resetAtMs).toBeGreaterThan(before);
    expect(tally.resetAtMs - after).toBeLessThanOrEqual(7000);
    expect(tally.nowMs).toBeGreaterThanOrEqual(Math.floor(before));
    expect(tally.nowMs).toBeLessThanOrEqual(Math.ceil(after));
  });
});
