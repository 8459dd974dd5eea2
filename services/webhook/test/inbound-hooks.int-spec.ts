import { randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { createServiceDataSource, TransactionRunner } from '@runline/db';
import { migrateServices } from '@runline/runtime';
import { createTestDatabase, type TestDatabase } from '@runline/testing';
import { deliveryKeysOf, pruneDeliveries } from '../src/deliveries/hook-deliveries.repository.js';
import { hookById, hooksByIds, hooksOfProject, insertHook, revokeHook } from '../src/hooks/inbound-hooks.repository.js';
import { webhookService } from '../src/webhook.service.js';

/** The webhook service's statements on a real PostgreSQL: hooks, and the delivery-id window and its races. */
describe('inbound hooks repository', () => {
  let database: TestDatabase;
  let dataSource: DataSource;
  let runner: TransactionRunner;
  const deliveryKeyOf = async (hookId: string, deliveryId: string) => (await deliveryKeysOf(runner, [{ hookId, deliveryId }]))[0]!;

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
    runner = new TransactionRunner(dataSource, { notify: () => undefined });
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
    const key = await deliveryKeyOf(hook, 'evt-1');
    expect(key).toMatch(/^[0-9a-f-]{36}$/);
    expect(await deliveryKeyOf(hook, 'evt-1')).toBe(key);
    // The same id at another hook is another delivery.
    expect(await deliveryKeyOf(randomUUID(), 'evt-1')).not.toBe(key);

    await age(hook, 'evt-1', '23 hours 59 minutes');
    expect(await deliveryKeyOf(hook, 'evt-1')).toBe(key);
    await age(hook, 'evt-1', '24 hours 1 second');
    const renewed = await deliveryKeyOf(hook, 'evt-1');
    expect(renewed).not.toBe(key);
    // The window starts again at the renewal.
    expect(await deliveryKeyOf(hook, 'evt-1')).toBe(renewed);
  });

  it('gives concurrent arrivals of one delivery id the same key', async () => {
    const hook = randomUUID();
    const keys = await Promise.all(Array.from({ length: 20 }, () => deliveryKeyOf(hook, 'evt-race')));
    expect(new Set(keys).size).toBe(1);
  });

  it('claims a batch in one go: new ids, ids seen, ids whose window ended, the same id twice', async () => {
    const hook = randomUUID();
    const seen = await deliveryKeyOf(hook, 'seen');
    const expired = await deliveryKeyOf(hook, 'expired');
    await age(hook, 'expired', '24 hours 1 second');
    const other = randomUUID();
    const keys = await deliveryKeysOf(runner, [
      { hookId: hook, deliveryId: 'new-1' },
      { hookId: hook, deliveryId: 'seen' },
      { hookId: hook.toUpperCase(), deliveryId: 'new-1' },
      { hookId: hook, deliveryId: 'expired' },
      { hookId: other, deliveryId: 'new-1' },
    ]);
    expect(keys[1]).toBe(seen);
    expect(keys[2]).toBe(keys[0]);
    expect(keys[3]).not.toBe(expired);
    expect(new Set([keys[0], keys[3], keys[4], seen]).size).toBe(4);
    // What the batch handed out is what a later arrival finds.
    expect(await deliveryKeyOf(hook, 'new-1')).toBe(keys[0]);
    expect(await deliveryKeyOf(hook, 'expired')).toBe(keys[3]);
    expect(await deliveryKeyOf(other, 'new-1')).toBe(keys[4]);
  });

  it('gives concurrent batches that share ids, in any order, the same keys and no deadlock', async () => {
    const hook = randomUUID();
    const ids = Array.from({ length: 30 }, (_, index) => `evt-${index}`);
    const batches = await Promise.all(
      Array.from({ length: 8 }, (_, batch) => {
        const order = batch % 2 === 0 ? ids : [...ids].reverse();
        return deliveryKeysOf(runner, order.map((deliveryId) => ({ hookId: hook, deliveryId })));
      }),
    );
    const byId = (keys: string[], batch: number) => new Map((batch % 2 === 0 ? ids : [...ids].reverse()).map((id, index) => [id, keys[index]]));
    const first = byId(batches[0]!, 0);
    batches.forEach((keys, batch) => expect(byId(keys, batch)).toEqual(first));
    expect(new Set(first.values()).size).toBe(30);
  });

  it('reads a batch of hooks in the order asked, null for unknown ids and non-ids', async () => {
    const hook = newHook();
    await insertHook(dataSource.manager, hook, new Date('2030-01-01T00:00:00Z'));
    const rows = await hooksByIds(runner, [randomUUID(), hook.id, 'x', hook.id.toUpperCase()]);
    expect(rows.map((row) => row?.id ?? null)).toEqual([null, hook.id, null, hook.id]);
    expect(rows[1]).toMatchObject({ org_id: hook.orgId, project_id: hook.projectId, name: 'orders', sealed_secret: 'sealed', status: 'ACTIVE', rate_limit_per_minute: 600 });
    expect(await hooksByIds(runner, ['x'])).toEqual([null]);
  });

  it('prunes only delivery ids whose window has ended', async () => {
    const hook = randomUUID();
    await deliveryKeyOf(hook, 'old');
    await deliveryKeyOf(hook, 'fresh');
    await age(hook, 'old', '25 hours');
    expect(await pruneDeliveries(dataSource.manager)).toBeGreaterThanOrEqual(1);
    const left = await dataSource.query(`SELECT delivery_id FROM hook_deliveries WHERE hook_id = $1`, [hook]);
    expect(left).toEqual([{ delivery_id: 'fresh' }]);
  });
});
