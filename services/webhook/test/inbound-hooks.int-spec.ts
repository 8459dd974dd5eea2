import { randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { Registry } from 'prom-client';
import {
  create,
  DeliveryVerdict,
  fromBinary,
  GetHookForGatewayReplySchema,
  GetHookForGatewayRequestSchema,
  toBinary,
  VerifyDeliveryReplySchema,
  VerifyDeliveryRequestSchema,
} from '@runline/contracts';
import { createServiceDataSource, TransactionRunner } from '@runline/db';
import { migrateServices, SecretBox } from '@runline/runtime';
import { deliveryKeyOf, runlineSignature } from '@runline/signatures';
import { createTestDatabase, TEST_SECRETS_KEY, type TestDatabase } from '@runline/testing';
import { VerifyDeliveryHandler } from '../src/commands/verify-delivery.handler.js';
import type { WebhookConfig } from '../src/config.js';
import { hookById, hooksByIds, hooksOfProject, insertHook, revokeHook } from '../src/hooks/inbound-hooks.repository.js';
import { GetHookForGatewayHandler } from '../src/queries/get-hook-for-gateway.handler.js';
import { webhookService } from '../src/webhook.service.js';

/** The webhook service's statements on a real PostgreSQL: hooks. */
describe('inbound hooks repository', () => {
  let database: TestDatabase;
  let dataSource: DataSource;
  let runner: TransactionRunner;

  const newHook = (projectId = randomUUID()) => ({
    id: randomUUID(),
    orgId: randomUUID(),
    projectId,
    name: 'orders',
    sealedSecret: 'sealed',
    rateLimitPerMinute: 600,
  });

  beforeAll(async () => {
    database = await createTestDatabase();
    await migrateServices([webhookService], database.url);
    dataSource = createServiceDataSource({ url: database.url, schema: 'webhook', migrations: [] });
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

  it('reads a batch of hooks in the order asked, null for unknown ids and non-ids', async () => {
    const hook = newHook();
    await insertHook(dataSource.manager, hook, new Date('2030-01-01T00:00:00Z'));
    const rows = await hooksByIds(runner, [randomUUID(), hook.id, 'x', hook.id.toUpperCase()]);
    expect(rows.map((row) => row?.id ?? null)).toEqual([null, hook.id, null, hook.id]);
    expect(rows[1]).toMatchObject({ org_id: hook.orgId, project_id: hook.projectId, name: 'orders', sealed_secret: 'sealed', status: 'ACTIVE', rate_limit_per_minute: 600 });
    expect(await hooksByIds(runner, ['x'])).toEqual([null]);
  });

  it('answers the gateway a hook with its secret still sealed, its status and the timestamp tolerance; nothing for an unknown id or a non-id', async () => {
    const handler = new GetHookForGatewayHandler(runner, { WEBHOOK_TIMESTAMP_TOLERANCE_SECONDS: 120 } as WebhookConfig);
    const ask = async (hookId: string) =>
      fromBinary(GetHookForGatewayReplySchema, await handler.execute(toBinary(GetHookForGatewayRequestSchema, create(GetHookForGatewayRequestSchema, { hookId })))).hook;
    const hook = newHook();
    await insertHook(dataSource.manager, hook, new Date('2030-01-01T00:00:00Z'));
    const expected = {
      id: hook.id,
      orgId: hook.orgId,
      projectId: hook.projectId,
      name: 'orders',
      sealedSecret: 'sealed',
      rateLimitPerMinute: 600,
      timestampToleranceSeconds: 120,
    };
    expect(await ask(hook.id)).toMatchObject({ ...expected, status: 'ACTIVE' });
    await revokeHook(dataSource.manager, hook.projectId, hook.id, new Date());
    expect(await ask(hook.id.toUpperCase())).toMatchObject({ ...expected, status: 'REVOKED' });
    expect(await ask(randomUUID())).toBeUndefined();
    expect(await ask('not-a-uuid')).toBeUndefined();
  });

  it('still verifies an inbound hook’s delivery when asked VerifyDelivery (a gateway holding no copy of it)', async () => {
    const secrets = new SecretBox(TEST_SECRETS_KEY);
    const config = { WEBHOOK_TIMESTAMP_TOLERANCE_SECONDS: 300, WEBHOOK_DEFAULT_RATE_LIMIT_PER_MINUTE: 600 } as WebhookConfig;
    const handler = new VerifyDeliveryHandler(runner, secrets, config, new Registry());
    const hook = { ...newHook(), sealedSecret: secrets.seal('hook-secret-0123456789') };
    await insertHook(dataSource.manager, hook, new Date());
    const body = '{"orderId":"A-1"}';
    const verify = async (hookId: string, headers: Record<string, string>) =>
      fromBinary(
        VerifyDeliveryReplySchema,
        await handler.execute(toBinary(VerifyDeliveryRequestSchema, create(VerifyDeliveryRequestSchema, { hookId, rawBody: Buffer.from(body), headers }))),
      );
    const signed = { 'x-runline-signature': runlineSignature('hook-secret-0123456789', body), 'x-runline-delivery': 'evt-1' };
    expect(await verify(hook.id, signed)).toMatchObject({
      verdict: DeliveryVerdict.VERIFIED,
      projectId: hook.projectId,
      rateLimitPerMinute: 600,
      deliveryKey: deliveryKeyOf(hook.id, 'evt-1'),
    });
    expect((await verify(hook.id, { 'x-runline-signature': runlineSignature('another-secret-0123456789', body) })).verdict).toBe(DeliveryVerdict.INVALID_SIGNATURE);
    await revokeHook(dataSource.manager, hook.projectId, hook.id, new Date());
    expect((await verify(hook.id, signed)).verdict).toBe(DeliveryVerdict.REVOKED);
    expect((await verify(randomUUID(), signed)).verdict).toBe(DeliveryVerdict.NOT_FOUND);
  });
});
