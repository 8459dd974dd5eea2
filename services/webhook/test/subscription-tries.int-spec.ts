import { randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { createServiceDataSource } from '@runline/db';
import { migrateServices } from '@runline/runtime';
import { createTestDatabase, type TestDatabase } from '@runline/testing';
import {
  claimAttempt,
  insertSubscription,
  markActive,
  markFailed,
  subscriptionById,
} from '../src/subscriptions/webhook-subscriptions.repository.js';
import { webhookService } from '../src/webhook.service.js';

/**
 * Tries at the provider across replicas: one try holds a subscription at a time (its lease), and
 * only the try still holding it records an outcome. A try that outlived its lease (a stalled
 * process) and another replica's try that took the subscription meanwhile never both decide.
 */
describe('webhook subscription tries', () => {
  let database: TestDatabase;
  let dataSource: DataSource;

  beforeAll(async () => {
    database = await createTestDatabase();
    await migrateServices([webhookService], database.url);
    dataSource = createServiceDataSource({ url: database.url, schema: 'webhook', migrations: [] });
    await dataSource.initialize();
  });
  afterAll(async () => {
    await dataSource?.destroy();
    await database?.drop();
  });

  /** A subscription whose first try holds the lease until `leaseUntil`. */
  const subscription = async (leaseUntil: Date) => {
    const id = randomUUID();
    await insertSubscription(
      dataSource.manager,
      { id, orgId: randomUUID(), projectId: randomUUID(), provider: 'stripe', events: ['charge.succeeded'], endpoint: `https://runline.example/v1/hooks/${id}`, sealedCredentials: 'sealed' },
      new Date(),
      leaseUntil,
    );
    return id;
  };

  it('a try whose lease ran out and was taken records nothing; the try holding it decides', async () => {
    const stale = new Date(Date.now() - 1000);
    const id = await subscription(stale);
    // Another replica's retry takes the subscription once the first try's lease ran out.
    const fresh = new Date(Date.now() + 30_000);
    expect(await claimAttempt(dataSource.manager, id, fresh)).not.toBeNull();
    // The first try comes back late: its outcome, either way, changes nothing.
    expect(await markFailed(dataSource.manager, id, stale, 'late failure')).toBeNull();
    expect(await markActive(dataSource.manager, id, stale, 'we_late', 'sealed-late')).toBeNull();
    // The late failure did not give the other try's lease back: no third try starts meanwhile.
    expect(await claimAttempt(dataSource.manager, id, new Date(Date.now() + 60_000))).toBeNull();
    const active = await markActive(dataSource.manager, id, fresh, 'we_fresh', 'sealed-fresh');
    expect(active).toMatchObject({ status: 'ACTIVE', provider_id: 'we_fresh', attempt_until: null });
    expect(await subscriptionById(dataSource.manager, id)).toMatchObject({ status: 'ACTIVE', provider_id: 'we_fresh' });
  });

  it('the try holding the lease records its failure and gives the lease back', async () => {
    const lease = new Date(Date.now() + 30_000);
    const id = await subscription(lease);
    expect(await markFailed(dataSource.manager, id, lease, 'Invalid API key')).toMatchObject({ status: 'FAILED', failure_reason: 'Invalid API key', attempt_until: null });
    expect(await claimAttempt(dataSource.manager, id, new Date(Date.now() + 30_000))).not.toBeNull();
  });

  it('of two replicas retrying one subscription at once, one takes the try', async () => {
    const id = await subscription(new Date(Date.now() - 1000));
    const claims = await Promise.all(Array.from({ length: 8 }, (_, index) => claimAttempt(dataSource.manager, id, new Date(Date.now() + 30_000 + index))));
    expect(claims.filter((claim) => claim !== null)).toHaveLength(1);
  });
});
