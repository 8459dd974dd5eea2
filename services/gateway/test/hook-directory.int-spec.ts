import { randomUUID } from 'node:crypto';
import { Registry } from 'prom-client';
import type { DataSource } from 'typeorm';
import { JetStreamBus, type Subscription } from '@runline/bus';
import {
  create,
  fromBinary,
  GetHookForGatewayReplySchema,
  GetHookForGatewayRequestSchema,
  InboundHookCopySchema,
  toBinary,
  WEBHOOK_QUERY_SUBJECTS,
  type InboundHookCopy,
} from '@runline/contracts';
import { createServiceDataSource, TransactionRunner } from '@runline/db';
import { migrateServices } from '@runline/runtime';
import { createTestDatabase, deletePrefixedStreams, testNatsUrl, uniqueBusPrefix, type TestDatabase } from '@runline/testing';
import { HookDirectory } from '../src/hooks/hook-directory.js';
import { ProjectVersions } from '../src/platform/changes/project-versions.js';
import type { GatewayConfig } from '../src/config.js';
import { gatewayService } from '../src/gateway.service.js';
import { ProjectRepository } from '../src/platform/store/project.repository.js';
import { ServiceClient } from '../src/platform/service-client/service-client.js';

/**
 * A gateway replica's copies of inbound hooks on a real PostgreSQL (the project versions) and a
 * real NATS, with a stand-in for the webhook service that answers GetHookForGateway from a map,
 * reads it when a request arrives (as the service reads its row) and can hold an answer back,
 * so a revocation can commit while a load is in flight.
 */
describe('hook directory', () => {
  let database: TestDatabase;
  let dataSource: DataSource;
  let bus: JetStreamBus;
  let responder: Subscription | undefined;
  let versions: ProjectVersions;
  const busPrefix = uniqueBusPrefix();
  const hooks = new Map<string, InboundHookCopy>();
  let requests = 0;
  let held: { at: number; arrived: () => void; release: Promise<void> } | undefined;

  const answerHooks = async () => {
    responder = await bus.reply(WEBHOOK_QUERY_SUBJECTS.GET_HOOK_FOR_GATEWAY, 'webhook', async (data) => {
      requests++;
      const stored = hooks.get(fromBinary(GetHookForGatewayRequestSchema, data).hookId);
      const hook = stored ? create(InboundHookCopySchema, { ...stored }) : undefined;
      const hold = held?.at === requests ? held : undefined;
      if (hold) {
        held = undefined;
        hold.arrived();
        await hold.release;
      }
      return toBinary(GetHookForGatewayReplySchema, create(GetHookForGatewayReplySchema, { hook }));
    });
  };
  /**
   * Holds the answer to the `nth` request from now (its hook read already) until `release` is
   * called; `arrived` resolves once it was read.
   */
  const holdAnswer = (nth = 1) => {
    let release!: () => void;
    const arrived = new Promise<void>((resolve) => {
      held = { at: requests + nth, arrived: resolve, release: new Promise<void>((done) => (release = done)) };
    });
    return { arrived, release: () => release() };
  };
  const directory = (ttlMs: number) =>
    new HookDirectory(
      new ServiceClient(bus, { SERVICE_REQUEST_TIMEOUT_MS: 2000 } as GatewayConfig),
      versions,
      { ACCESS_CACHE_TTL_MS: ttlMs } as GatewayConfig,
      new Registry(),
    );

  const orgId = randomUUID();
  const newProject = async () => {
    const projectId = randomUUID();
    await dataSource.query(`INSERT INTO projects (id, org_id, name, type) VALUES ($1, $2, 'hooks', 'CHATBOT')`, [projectId, orgId]);
    return projectId;
  };
  const newHook = (projectId: string) => {
    const hook = create(InboundHookCopySchema, {
      id: randomUUID(),
      orgId,
      projectId,
      name: 'orders',
      sealedSecret: 'v1.sealed',
      status: 'ACTIVE',
      rateLimitPerMinute: 600,
      timestampToleranceSeconds: 300,
    });
    hooks.set(hook.id, hook);
    return hook;
  };
  /** What RevokeWebhookHandler does: the webhook service revokes, then the project gets a new version. */
  const revoke = async (hook: InboundHookCopy) => {
    hooks.set(hook.id, create(InboundHookCopySchema, { ...hook, status: 'REVOKED' }));
    await bumpVersion(hook.projectId);
  };
  const bumpVersion = (projectId: string) => dataSource.query('UPDATE projects SET config_version = config_version + 1 WHERE id = $1', [projectId]);
  const lookUp = (hooksOf: HookDirectory, id: string) => hooksOf.hook(id, performance.now());

  beforeAll(async () => {
    database = await createTestDatabase();
    await migrateServices([gatewayService], database.url);
    dataSource = createServiceDataSource({ url: database.url, schema: 'gateway', migrations: [] });
    await dataSource.initialize();
    await dataSource.query(`INSERT INTO organizations (id, name) VALUES ($1, 'Hooks')`, [orgId]);
    versions = new ProjectVersions(new ProjectRepository(dataSource, new TransactionRunner(dataSource, { notify: () => undefined })));
    bus = await JetStreamBus.connect({ url: testNatsUrl(), prefix: busPrefix, name: 'hook-directory-test' });
    await answerHooks();
  });
  afterAll(async () => {
    await responder?.stop();
    await bus?.close();
    await deletePrefixedStreams(testNatsUrl(), busPrefix);
    await dataSource?.destroy();
    await database?.drop();
  });
  beforeEach(() => {
    requests = 0;
  });

  it('loads a hook the first time (twice: its project is learnt from the first answer), then answers from the copy', async () => {
    const hooksOf = directory(60_000);
    const hook = newHook(await newProject());
    expect(await lookUp(hooksOf, hook.id)).toMatchObject({ id: hook.id, projectId: hook.projectId, sealedSecret: 'v1.sealed', status: 'ACTIVE', timestampToleranceSeconds: 300 });
    expect(requests).toBe(2);
    for (let i = 0; i < 5; i++) expect((await lookUp(hooksOf, hook.id.toUpperCase()))?.status).toBe('ACTIVE');
    expect(requests).toBe(2);
  });

  it('loads it again, once, when the project’s config version has moved', async () => {
    const hooksOf = directory(60_000);
    const hook = newHook(await newProject());
    await lookUp(hooksOf, hook.id);
    await bumpVersion(hook.projectId);
    requests = 0;
    for (let i = 0; i < 3; i++) expect((await lookUp(hooksOf, hook.id))?.status).toBe('ACTIVE');
    expect(requests).toBe(1);
  });

  it('never keeps a copy loaded as a revocation committed: the next lookup reads it revoked', async () => {
    const hooksOf = directory(60_000);
    const hook = newHook(await newProject());
    await lookUp(hooksOf, hook.id);
    await bumpVersion(hook.projectId);
    // The reload reads the hook still active; the revocation and its new version commit before the answer arrives.
    const hold = holdAnswer();
    const inFlight = lookUp(hooksOf, hook.id);
    await hold.arrived;
    await revoke(hook);
    hold.release();
    expect((await inFlight)?.status).toBe('ACTIVE');
    expect((await lookUp(hooksOf, hook.id))?.status).toBe('REVOKED');
  });

  it('the same on a hook seen for the first time, whichever of its two loads the revocation overtakes', async () => {
    for (const overtaken of [1, 2]) {
      const hooksOf = directory(60_000);
      const hook = newHook(await newProject());
      const hold = holdAnswer(overtaken);
      const inFlight = lookUp(hooksOf, hook.id);
      await hold.arrived;
      await revoke(hook);
      hold.release();
      await inFlight;
      expect([overtaken, (await lookUp(hooksOf, hook.id))?.status]).toEqual([overtaken, 'REVOKED']);
    }
  });

  it('remembers an id with no hook for the TTL only', async () => {
    const hooksOf = directory(200);
    const id = randomUUID();
    expect(await lookUp(hooksOf, id)).toBeNull();
    expect(await lookUp(hooksOf, id)).toBeNull();
    expect(requests).toBe(1);
    await new Promise((resolve) => setTimeout(resolve, 250));
    const hook = newHook(await newProject());
    hooks.set(id, create(InboundHookCopySchema, { ...hook, id }));
    expect((await lookUp(hooksOf, id))?.id).toBe(id);
  });

  it('forgets a copy it is told to evict', async () => {
    const hooksOf = directory(60_000);
    const hook = newHook(await newProject());
    await lookUp(hooksOf, hook.id);
    requests = 0;
    hooksOf.evict(hook.id.toUpperCase());
    await lookUp(hooksOf, hook.id);
    expect(requests).toBe(2);
  });

  it('with the webhook service silent: uses a copy past its TTL while its version stands, never a stale one, and says unavailable for the rest', async () => {
    const hooksOf = directory(50);
    const hook = newHook(await newProject());
    await lookUp(hooksOf, hook.id);
    await responder?.stop();
    try {
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect((await lookUp(hooksOf, hook.id))?.status).toBe('ACTIVE');
      await expect(lookUp(hooksOf, randomUUID())).rejects.toMatchObject({ kind: 'unavailable', message: 'Webhook service unavailable, retry shortly' });
      await bumpVersion(hook.projectId);
      await expect(lookUp(hooksOf, hook.id)).rejects.toMatchObject({ kind: 'unavailable' });
    } finally {
      await answerHooks();
    }
  });
});
