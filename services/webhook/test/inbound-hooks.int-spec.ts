import { randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { createServiceDataSource } from '@runline/db';
import { migrateServices } from '@runline/runtime';
import { createTestDatabase, type TestDatabase } from '@runline/testing';
import { deliveryKeyOf, pruneDeliveries } from '../src/deliveries/hook-deliveries.repository.js';
import { hookById, hooksOfProject, insertHook, revokeHook } from '../src/hooks/inbound-hooks.repository.js';
import { webhookService } from '../src/webhook.service.js';

/** The webhook service's statements on a real PostgreSQL: hooks, and the delivery-id window and its races. */
describe('inbound hooks repository', () => {
  let database: TestDatabase;
  let dataSource: DataSource;

  const newHook = (projectId = randomUUID()) => ({
    id: randomUUID(),
    orgId: randomUUID(),
    projectId,
    name: 'orders',
    sealedSecret: 'sealed',
    rateLimitPerMinute: 600,
  });
  const age = (hookId: string, deliveryId: string, interval: string) =>
    dataSource.query(`UPDATE hook_deliveries SET first_seen_at = now() - $3::interval WHERE hook_id = $1 AND delivery_id = $2`, [hookId, deliveryId, interval]);

  beforeAll(async () => {
    database = await createTestDatabase();
    await migrateServices([webhookService], database.url);
    dataSource = createServiceDataSource({ url: database.url, schema: 'webhook', entities: [], migrations: [] });
    await dataSource.initialize();
  });
  afterAll(async () => {
    await dataSource?.destroy();
    await database?.drop();
  });

  it('stores a hook, lists a project’s newest first, and revokes it once and for all', async () => {
    const projectId = randomUUID();
    const first = newHook(projectId);
    const second = newHook(projectId);
    await insertHook(dataSource.manager, first, new Date('2030-01-01T00:00:00Z'));
    await insertHook(dataSource.manager, second, new Date('2030-01-02T00:00:00Z'));
    expect((await hooksOfProject(dataSource.manager, projectId)).map((row) => row.id)).toEqual([second.id, first.id]);

    expect(await revokeHook(dataSource.manager, projectId, first.id, new Date('2030-01-03T00:00:00Z'))).toBe(true);
    expect(await revokeHook(dataSource.manager, projectId, first.id, new Date('2030-01-04T00:00:00Z'))).toBe(true);
    const [row] = await dataSource.query(`SELECT status, revoked_at FROM inbound_hooks WHERE id = $1`, [first.id]);
    expect(row).toEqual({ status: 'REVOKED', revoked_at: new Date('2030-01-03T00:00:00Z') });
    // Not this project's hook, not a hook at all, not an id.
    expect(await revokeHook(dataSource.manager, randomUUID(), second.id, new Date())).toBe(false);
    expect(await revokeHook(dataSource.manager, projectId, randomUUID(), new Date())).toBe(false);
    expect(await revokeHook(dataSource.manager, projectId, 'x', new Date())).toBe(false);
    expect(await hookById(dataSource.manager, 'x')).toBeNull();
    expect((await hookById(dataSource.manager, second.id))?.status).toBe('ACTIVE');
  });

  it('hands one key per hook and delivery id within 24 hours, a new one after', async () => {
    const hook = randomUUID();
    const key = await deliveryKeyOf(dataSource.manager, hook, 'evt-1');
    expect(key).toMatch(/^[0-9a-f-]{36}$/);
    expect(await deliveryKeyOf(dataSource.manager, hook, 'evt-1')).toBe(key);
    // The same id at another hook is another delivery.
    expect(await deliveryKeyOf(dataSource.manager, randomUUID(), 'evt-1')).not.toBe(key);

    await age(hook, 'evt-1', '23 hours 59 minutes');
    expect(await deliveryKeyOf(dataSource.manager, hook, 'evt-1')).toBe(key);
    await age(hook, 'evt-1', '24 hours 1 second');
    const renewed = await deliveryKeyOf(dataSource.manager, hook, 'evt-1');
    expect(renewed).not.toBe(key);
    // The window starts again at the renewal.
    expect(await deliveryKeyOf(dataSource.manager, hook, 'evt-1')).toBe(renewed);
  });

  it('gives concurrent arrivals of one delivery id the same key', async () => {
    const hook = randomUUID();
    const keys = await Promise.all(Array.from({ length: 20 }, () => deliveryKeyOf(dataSource.manager, hook, 'evt-race')));
    expect(new Set(keys).size).toBe(1);
  });

  it('prunes only delivery ids whose window has ended', async () => {
    const hook = randomUUID();
    await deliveryKeyOf(dataSource.manager, hook, 'old');
    await deliveryKeyOf(dataSource.manager, hook, 'fresh');
    await age(hook, 'old', '25 hours');
    expect(await pruneDeliveries(dataSource.manager)).toBeGreaterThanOrEqual(1);
    const left = await dataSource.query(`SELECT delivery_id FROM hook_deliveries WHERE hook_id = $1`, [hook]);
    expect(left).toEqual([{ delivery_id: 'fresh' }]);
  });
});
