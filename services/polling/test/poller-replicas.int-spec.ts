import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { Registry } from 'prom-client';
import type { DataSource } from 'typeorm';
import type { Bus } from '@runline/bus';
import { createServiceDataSource, TransactionRunner } from '@runline/db';
import { createLogger } from '@runline/observability';
import { OutboundGuard } from '@runline/outbound';
import { migrateServices, SecretBox } from '@runline/runtime';
import { createTestDatabase, TEST_SECRETS_KEY, type TestDatabase } from '@runline/testing';
import type { PollingConfig } from '../src/config.js';
import { pollingService } from '../src/polling.service.js';
import { Poller } from '../src/polling/poller.js';
import { upsertTrigger } from '../src/polling/polling-triggers.repository.js';

/**
 * The poller with two replicas on one table, through a rolling restart: a replica stopping
 * (SIGTERM) gives back the polls it claimed ahead of their due time, so the other replica polls
 * them on time instead of after the lease.
 */
describe('poller replicas at shutdown', () => {
  let database: TestDatabase;
  let dataSource: DataSource;
  let endpoint: Server;
  let base: string;
  /** GETs received, by trigger id (the path). */
  const polled: Array<{ triggerId: string; at: number }> = [];
  /** How long the endpoint waits before answering. */
  let answerDelayMs = 0;
  const pollers: Poller[] = [];

  const poller = (overrides: Partial<PollingConfig> = {}): Poller => {
    const config = {
      SECRETS_KEY: TEST_SECRETS_KEY,
      OUTBOUND_ALLOWED_CIDRS: '127.0.0.0/8',
      POLLING_CLAIM_LEAD_MS: 200,
      POLLING_SWEEP_INTERVAL_MS: 100,
      POLLING_WRITE_BATCH_MS: 10,
      POLLING_BATCH_SIZE: 100,
      POLLING_REQUEST_TIMEOUT_MS: 5000,
      POLLING_MAX_RESPONSE_BYTES: 64 * 1024,
      POLLING_LEASE_MS: 60_000,
      POLLING_RUN_REQUEST_TIMEOUT_MS: 5000,
      SERVICE_REQUEST_TIMEOUT_MS: 5000,
      ...overrides,
    } as PollingConfig;
    const created = new Poller(
      new TransactionRunner(dataSource, { notify: () => undefined }),
      new OutboundGuard({ allowedCidrs: ['127.0.0.0/8'] }),
      // The endpoint answers no items: no run is requested.
      {} as Bus,
      new SecretBox(TEST_SECRETS_KEY),
      config,
      createLogger({ service: 'polling', level: (process.env.TEST_LOG as 'silent') ?? 'silent' }),
      new Registry(),
    );
    pollers.push(created);
    return created;
  };

  const register = async (dueAt: Date) => {
    const id = randomUUID();
    await dataSource.transaction((manager) =>
      upsertTrigger(
        manager,
        {
          id,
          orgId: randomUUID(),
          projectId: randomUUID(),
          pollKey: `key-${id.slice(0, 8)}`,
          source: 'crm',
          pollEndpoint: `${base}/${id}`,
          dedupeField: 'id',
          sealedAuthHeader: null,
          intervalMs: 60_000,
          runTarget: 'FLOW',
        },
        dueAt,
      ),
    );
    return id;
  };
  const row = async (id: string) =>
    ((await dataSource.query(`SELECT lease_id, leased_until, next_poll_at, last_polled_at FROM polling_triggers WHERE id = $1`, [id])) as Array<{
      lease_id: string | null;
      leased_until: Date | null;
      next_poll_at: Date;
      last_polled_at: Date | null;
    }>)[0]!;
  const until = async (what: string, probe: () => boolean | Promise<boolean>, timeoutMs = 5000) => {
    const deadline = Date.now() + timeoutMs;
    while (!(await probe())) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await sleep(20);
    }
  };

  beforeAll(async () => {
    database = await createTestDatabase();
    await migrateServices([pollingService], database.url);
    dataSource = createServiceDataSource({ url: database.url, schema: 'polling', migrations: [] });
    await dataSource.initialize();
    endpoint = createServer((request: IncomingMessage, response: ServerResponse) => {
      polled.push({ triggerId: (request.url ?? '').split('/').pop() ?? '', at: Date.now() });
      setTimeout(() => response.writeHead(200, { 'content-type': 'application/json' }).end('[]'), answerDelayMs);
    });
    await new Promise<void>((resolve) => endpoint.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(endpoint.address() as AddressInfo).port}/poll`;
  });
  beforeEach(async () => {
    await dataSource.query('DELETE FROM polling_triggers');
    polled.length = 0;
    answerDelayMs = 0;
  });
  afterEach(async () => {
    for (const each of pollers.splice(0)) await each.onApplicationShutdown();
  });
  afterAll(async () => {
    endpoint?.closeAllConnections();
    await new Promise<void>((resolve) => (endpoint ? endpoint.close(() => resolve()) : resolve()));
    await dataSource?.destroy();
    await database?.drop();
  });

  it('a replica stopping releases the polls it claimed but has not started: the next replica polls them at their due time, not after the lease', async () => {
    const dueAt = Date.now() + 1500;
    const id = await register(new Date(dueAt));
    // A long claim lead: the first replica claims the poll well before it is due.
    const stopping = poller({ POLLING_CLAIM_LEAD_MS: 5000 });
    stopping.onApplicationBootstrap();
    await until('the first replica to claim the poll', async () => (await row(id)).lease_id !== null);

    await stopping.onApplicationShutdown();
    expect(await row(id)).toMatchObject({ lease_id: null, leased_until: null, next_poll_at: new Date(dueAt) });

    poller().onApplicationBootstrap();
    await until('the next replica to poll', () => polled.some((poll) => poll.triggerId === id), 4000);
    expect(polled).toHaveLength(1);
    expect(polled[0]!.at).toBeGreaterThanOrEqual(dueAt);
    expect(polled[0]!.at - dueAt).toBeLessThan(1000);
    await until('the outcome recorded', async () => (await row(id)).last_polled_at !== null);
    expect((await row(id)).next_poll_at).toEqual(new Date(dueAt + 60_000));
  }, 15_000);

  it('a replica stopping waits for its polls in progress and records their outcome; nothing is polled twice', async () => {
    answerDelayMs = 500;
    const dueAt = Date.now();
    const id = await register(new Date(dueAt));
    const stopping = poller();
    stopping.onApplicationBootstrap();
    await until('the poll to start', () => polled.length === 1);

    const next = poller();
    const shutdown = stopping.onApplicationShutdown();
    next.onApplicationBootstrap();
    await shutdown;
    expect(await row(id)).toMatchObject({ lease_id: null, next_poll_at: new Date(dueAt + 60_000) });
    expect((await row(id)).last_polled_at).not.toBeNull();
    await sleep(300);
    expect(polled).toHaveLength(1);
  }, 15_000);
});
