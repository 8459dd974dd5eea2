import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { Registry } from 'prom-client';
import type { DataSource } from 'typeorm';
import { createServiceDataSource, TransactionRunner } from '@runline/db';
import { createLogger } from '@runline/observability';
import { OutboundGuard } from '@runline/outbound';
import { migrateServices, SecretBox } from '@runline/runtime';
import { createTestDatabase, TEST_SECRETS_KEY, type TestDatabase } from '@runline/testing';
import { callbackService } from '../src/callback.service.js';
import type { CallbackConfig } from '../src/config.js';
import { insertDeliveries, type NewDelivery } from '../src/deliveries/callback-deliveries.repository.js';
import { DeliveryDispatcher, DispatcherStoppedError, leaseCoversAttempt } from '../src/deliveries/delivery-dispatcher.js';
import { ACK_WINDOW_MS } from '../src/deliveries/delivery-rules.js';

/**
 * The dispatcher with two replicas on one table: a replica claims no more than it can attempt
 * now, so a backlog is shared instead of held by one replica past its lease (and then attempted
 * twice: by it, and by the replica that claimed it after the lease).
 */
describe('delivery dispatcher replicas', () => {
  let database: TestDatabase;
  let dataSource: DataSource;
  let receiver: Server;
  let url: string;
  /** The receiver's self-signed certificate (callbacks go out over HTTPS only). */
  let cert: string;
  /** Requests received, by delivery id (the body's invocationId). */
  const received: string[] = [];
  /** Answers held until the test lets them go. */
  const held: ServerResponse[] = [];
  let holdAnswers = true;
  /** When answers are not held: how long the receiver takes to answer each request. */
  let answerAfterMs = 0;
  /** Requests the receiver is working on now, and the most at once. */
  let answering = 0;
  let mostAtOnce = 0;
  const dispatchers: DeliveryDispatcher[] = [];

  const dispatcher = (overrides: Partial<CallbackConfig>): DeliveryDispatcher => {
    const config = {
      SECRETS_KEY: TEST_SECRETS_KEY,
      OUTBOUND_ALLOWED_CIDRS: '127.0.0.0/8',
      CALLBACK_LEASE_MS: 30_000,
      CALLBACK_SWEEP_INTERVAL_MS: 50,
      CALLBACK_CONCURRENCY: 1,
      CALLBACK_CONNECTIONS_PER_RECEIVER: 64,
      CALLBACK_MAX_RESPONSE_BYTES: 64 * 1024,
      ...overrides,
    } as CallbackConfig;
    const created = new DeliveryDispatcher(
      new TransactionRunner(dataSource, { notify: () => undefined }),
      // As the module makes it: the pool's connections to a receiver are the dispatcher's limit.
      new OutboundGuard({ allowedCidrs: ['127.0.0.0/8'], ca: cert, maxSocketsPerAddress: config.CALLBACK_CONNECTIONS_PER_RECEIVER }),
      new SecretBox(TEST_SECRETS_KEY),
      config,
      createLogger({ service: 'callback', level: 'silent' }),
      new Registry(),
    );
    dispatchers.push(created);
    return created;
  };

  const delivery = (): NewDelivery => {
    const invocationId = randomUUID();
    return {
      id: randomUUID(),
      invocationId,
      orgId: randomUUID(),
      projectId: randomUUID(),
      url,
      sealedSecret: null,
      body: Buffer.from(JSON.stringify({ invocationId, status: 'SUCCEEDED' })),
      runStatus: 'SUCCEEDED',
      correlationId: null,
      traceparent: null,
    };
  };

  const until = async (what: string, probe: () => boolean | Promise<boolean>, timeoutMs = 10_000) => {
    const deadline = Date.now() + timeoutMs;
    while (!(await probe())) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await sleep(20);
    }
  };

  const dueNow = async () => Number((await dataSource.query(`SELECT count(*) AS n FROM callback_deliveries WHERE status = 'PENDING' AND next_attempt_at <= now()`))[0].n);
  const attemptsPerDelivery = async () =>
    (await dataSource.query(`SELECT delivery_id, count(*)::int AS n FROM callback_attempts GROUP BY delivery_id`)) as Array<{ delivery_id: string; n: number }>;

  beforeAll(async () => {
    let key = '';
    database = await createTestDatabase();
    await migrateServices([callbackService], database.url);
    dataSource = createServiceDataSource({ url: database.url, schema: 'callback', migrations: [] });
    await dataSource.initialize();
    const dir = await mkdtemp(join(tmpdir(), 'runline-dispatcher-tls-'));
    try {
      await promisify(execFile)('openssl', [
        'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes',
        '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem'), '-days', '1',
        '-subj', '/CN=runline-test-receiver', '-addext', 'subjectAltName=IP:127.0.0.1',
      ]);
      cert = await readFile(join(dir, 'cert.pem'), 'utf8');
      key = await readFile(join(dir, 'key.pem'), 'utf8');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
    receiver = createServer({ key, cert }, (request: IncomingMessage, response: ServerResponse) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        received.push((JSON.parse(Buffer.concat(chunks).toString('utf8')) as { invocationId: string }).invocationId);
        if (holdAnswers) {
          held.push(response);
          return;
        }
        mostAtOnce = Math.max(mostAtOnce, ++answering);
        setTimeout(() => {
          answering--;
          response.writeHead(200).end();
        }, answerAfterMs);
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    url = `https://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
  });
  afterAll(async () => {
    for (const response of held) response.writeHead(200).end();
    await Promise.all(dispatchers.map((each) => each.onApplicationShutdown()));
    receiver?.closeAllConnections();
    await new Promise<void>((resolve) => (receiver ? receiver.close(() => resolve()) : resolve()));
    await dataSource?.destroy();
    await database?.drop();
  });

  it('a lease covers an attempt only while the acknowledgement window and a margin are left', () => {
    expect(leaseCoversAttempt(1_000_000 + ACK_WINDOW_MS + 500, 1_000_000)).toBe(true);
    expect(leaseCoversAttempt(1_000_000 + ACK_WINDOW_MS + 499, 1_000_000)).toBe(false);
  });

  it('a replica with one free slot claims one due delivery; the others stay due and another replica delivers them, each once', async () => {
    const items = [delivery(), delivery(), delivery()];
    // Due now: their last lease ran out a minute ago.
    await dataSource.transaction((manager) => insertDeliveries(manager, items, new Date(Date.now() - 120_000), new Date(Date.now() - 60_000)));

    const first = dispatcher({ CALLBACK_CONCURRENCY: 1 });
    first.onApplicationBootstrap();
    await until('the first attempt to reach the receiver', () => received.length === 1);
    // Several sweeps later the replica still holds only what it is attempting.
    await sleep(300);
    expect(received).toHaveLength(1);
    expect(await dueNow()).toBe(2);

    // A second replica takes the other two at once instead of waiting for a lease to run out.
    const second = dispatcher({ CALLBACK_CONCURRENCY: 4 });
    second.onApplicationBootstrap();
    await until('the other two attempts', () => received.length === 3);
    expect(new Set(received)).toEqual(new Set(items.map((item) => item.invocationId)));

    holdAnswers = false;
    for (const response of held.splice(0)) response.writeHead(200).end();
    await until('every delivery recorded', async () => (await attemptsPerDelivery()).length === 3);
    expect((await attemptsPerDelivery()).map((row) => row.n)).toEqual([1, 1, 1]);
    await sleep(200);
    expect(received).toHaveLength(3);
  });

  it('no attempt is made twice when a replica is busy past the lease of what it claimed (one slot, a receiver that never answers)', async () => {
    for (const each of dispatchers.splice(0)) await each.onApplicationShutdown();
    await dataSource.query('DELETE FROM callback_attempts');
    await dataSource.query('DELETE FROM callback_deliveries');
    received.length = 0;
    holdAnswers = true;
    const items = [delivery(), delivery()];
    await dataSource.transaction((manager) => insertDeliveries(manager, items, new Date(Date.now() - 120_000), new Date(Date.now() - 60_000)));

    // The shortest lease allowed: the acknowledgement window and a second.
    const busy = dispatcher({ CALLBACK_CONCURRENCY: 1, CALLBACK_LEASE_MS: ACK_WINDOW_MS + 1000 });
    busy.onApplicationBootstrap();
    await until('the first attempt', () => received.length === 1);
    const other = dispatcher({ CALLBACK_CONCURRENCY: 4, CALLBACK_LEASE_MS: ACK_WINDOW_MS + 1000 });
    other.onApplicationBootstrap();
    // The busy replica's first attempt times out after the window; past its lease the other
    // replica may claim whatever the busy one still held.
    await sleep(ACK_WINDOW_MS + 2000);
    holdAnswers = false;
    for (const response of held.splice(0)) response.writeHead(200).end();
    for (const each of dispatchers.splice(0)) await each.onApplicationShutdown();
    // Every request the receiver got is an attempt recorded once: none was made twice.
    const recorded = new Map((await attemptsPerDelivery()).map((row) => [row.delivery_id, row.n]));
    const requests = new Map<string, number>();
    for (const invocationId of received) requests.set(invocationId, (requests.get(invocationId) ?? 0) + 1);
    for (const item of items) expect({ delivery: item.invocationId, requests: requests.get(item.invocationId) ?? 0 }).toEqual({ delivery: item.invocationId, requests: recorded.get(item.id) ?? 0 });
  }, 30_000);

  it('a replica shutting down takes no new delivery and gives back what it claimed but did not attempt: another replica attempts it at once, not after the lease', async () => {
    for (const each of dispatchers.splice(0)) await each.onApplicationShutdown();
    await dataSource.query('DELETE FROM callback_attempts');
    await dataSource.query('DELETE FROM callback_deliveries');
    received.length = 0;
    holdAnswers = true;
    const [busy, queued, racing, late] = [delivery(), delivery(), delivery(), delivery()];

    // One slot and a 30 s lease: `busy` is being attempted, `queued` is claimed and waits for the slot.
    const stopping = dispatcher({ CALLBACK_CONCURRENCY: 1 });
    stopping.onApplicationBootstrap();
    await stopping.accept(busy);
    await until('the first attempt', () => received.includes(busy.invocationId));
    await stopping.accept(queued);
    // Accepted (committing) just as shutdown begins, and accepted after it began.
    const racingAccept = stopping.accept(racing);
    const shutdown = stopping.onApplicationShutdown();
    await racingAccept;
    await expect(stopping.accept(late)).rejects.toThrow(DispatcherStoppedError);

    const other = dispatcher({ CALLBACK_CONCURRENCY: 4 });
    other.onApplicationBootstrap();
    await until('the given-back deliveries to be attempted by the other replica', () => received.includes(queued.invocationId) && received.includes(racing.invocationId), 3000);

    holdAnswers = false;
    for (const response of held.splice(0)) response.writeHead(200).end();
    await shutdown;
    await until('every delivery recorded', async () => (await attemptsPerDelivery()).length === 3);
    expect((await attemptsPerDelivery()).map((row) => row.n)).toEqual([1, 1, 1]);
    // Refused, not recorded: the command is nak'ed and another replica records it.
    expect((await dataSource.query('SELECT id FROM callback_deliveries WHERE id = $1', [late.id])) as unknown[]).toEqual([]);
    expect(received.filter((id) => id === busy.invocationId)).toHaveLength(1);
  }, 20_000);

  it("a receiver answering each callback in time gets every one acknowledged at the first attempt, however many wait for its connections: the window starts when the request goes out", async () => {
    for (const each of dispatchers.splice(0)) await each.onApplicationShutdown();
    await dataSource.query('DELETE FROM callback_attempts');
    await dataSource.query('DELETE FROM callback_deliveries');
    received.length = 0;
    holdAnswers = false;
    answerAfterMs = 1_000;
    mostAtOnce = 0;
    // Two connections and 24 callbacks answered in 1 s each: the last go out after 11 s, past
    // the window had it started when the attempt was claimed (then they timed out unsent).
    const sender = dispatcher({ CALLBACK_CONCURRENCY: 512, CALLBACK_CONNECTIONS_PER_RECEIVER: 2 });
    sender.onApplicationBootstrap();
    const items = Array.from({ length: 24 }, () => delivery());
    await Promise.all(items.map((item) => sender.accept(item)));
    await until('every delivery to end', async () => Number((await dataSource.query(`SELECT count(*) AS n FROM callback_deliveries WHERE status <> 'PENDING'`))[0].n) === 24, 25_000);
    const outcomes = (await dataSource.query(`SELECT outcome, count(*)::int AS n FROM callback_attempts GROUP BY outcome`)) as Array<{ outcome: string; n: number }>;
    expect(outcomes).toEqual([{ outcome: 'ACKNOWLEDGED', n: 24 }]);
    expect(mostAtOnce).toBeLessThanOrEqual(2);
  }, 40_000);

  it('a delivery that waits for its receiver past its lease has its claim renewed and keeps its place: each goes out once, none waits out a lease', async () => {
    for (const each of dispatchers.splice(0)) await each.onApplicationShutdown();
    await dataSource.query('DELETE FROM callback_attempts');
    await dataSource.query('DELETE FROM callback_deliveries');
    received.length = 0;
    holdAnswers = false;
    answerAfterMs = 300;
    // The shortest lease allowed leaves half a second to wait before an attempt: one connection
    // and 20 callbacks of 0.3 s make the last wait about 6 s, in their lease's second half.
    const sender = dispatcher({ CALLBACK_CONCURRENCY: 512, CALLBACK_CONNECTIONS_PER_RECEIVER: 1, CALLBACK_LEASE_MS: ACK_WINDOW_MS + 1000 });
    sender.onApplicationBootstrap();
    const items = Array.from({ length: 20 }, () => delivery());
    const began = Date.now();
    await Promise.all(items.map((item) => sender.accept(item)));
    await until('every delivery to end', async () => Number((await dataSource.query(`SELECT count(*) AS n FROM callback_deliveries WHERE status <> 'PENDING'`))[0].n) === 20, 30_000);
    // Without the renewal those that waited past half a second went out only after their lease.
    expect(Date.now() - began).toBeLessThan(ACK_WINDOW_MS);
    expect((await attemptsPerDelivery()).map((row) => row.n)).toEqual(Array(20).fill(1));
    expect([...received].sort()).toEqual(items.map((item) => item.invocationId).sort());
  }, 40_000);
});
