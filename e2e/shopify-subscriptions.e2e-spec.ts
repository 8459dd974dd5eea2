import { randomBytes } from 'node:crypto';
import { PassThrough } from 'node:stream';
import { deadLetterService } from '@runline/dead-letter-service';
import { gatewayService } from '@runline/gateway-service';
import { invocationService } from '@runline/invocation-service';
import { HttpClient, queryDatabase, startTestSystem, type TestSystem } from '@runline/testing';
import { createPublishedProject, type ProjectFixture } from './gateway-fixtures.js';
import { selfSignedCertificate, type TestCertificate } from './support/https-receiver.js';
import { eventually } from './support/lifecycle-support.js';
import type { RunningProcess } from './support/processes.js';
import { shopifyAnswers, startShopifyFake, type ShopifyFake } from './support/providers/shopify-fake.js';
import { expectSecretsKeptOut, type Subscription } from './support/subscriptions-support.js';
import { startWebhookProcess } from './support/webhook-process.js';


/** An automation whose trigger expects what a Shopify order has: its id and email. */
const SHOPIFY_AUTOMATION = {
  schemaVersion: 1,
  workflow: {
    trigger: { externalEnabled: true, key: 'shopify_order', expectedPayload: { id: 0, email: '' } },
    start: 'n1',
    nodes: { n1: { type: 'return', value: "{ 'ok': true, 'order': payload.id }" } },
  },
};

const ORDER = { id: 450789469, email: 'jon@example.com', total_price: '254.98', currency: 'USD' };
const INVALID_TOKEN = '[API] Invalid API key or access token (unrecognized login or wrong password)';
const GID = /^gid:\/\/shopify\/WebhookSubscription\/\d+$/;
const newToken = () => `shpat_${randomBytes(16).toString('hex')}`;
const newSecret = () => `shpss_${randomBytes(16).toString('hex')}`;

/**
 * Managed Shopify subscriptions end to end (DESIGN section 9): console routes over HTTP, the
 * webhook service (its own process, trusting the fake's certificate) creating and deleting
 * webhook subscriptions through a local shop's Admin GraphQL API over HTTPS through the outbound
 * guard, and the deliveries the shop signs as Shopify does.
 */
describe('Shopify subscriptions', () => {
  let certificate: TestCertificate;
  let system: TestSystem;
  let webhook: RunningProcess;
  let http: HttpClient;
  let project: ProjectFixture;
  /** Each test's own shop, so what one test leaves at Shopify does not meet another's. */
  const shops: ShopifyFake[] = [];
  const logs = new PassThrough();
  let logText = '';
  logs.on('data', (chunk: Buffer) => (logText += chunk.toString()));
  const sql = <T>(query: string, parameters: unknown[] = []) => queryDatabase(system.database.url, query, parameters) as Promise<T[]>;
  /** Every access token and client secret the tests used: none may show in an answer or a log. */
  const secrets: string[] = [];
  const answers: unknown[] = [];

  const path = () => `/v1/orgs/${project.orgId}/projects/${project.projectId}/webhook-subscriptions`;
  const newShop = async () => {
    const credentials = { accessToken: newToken(), apiSecret: newSecret() };
    secrets.push(credentials.accessToken, credentials.apiSecret);
    const shop = await startShopifyFake({ certificate, ...credentials, allowLoopbackHttpCallbacks: true });
    shops.push(shop);
    return { shop, credentials: { storeDomain: shop.storeDomain, ...credentials } };
  };
  const subscribe = async (body: Record<string, unknown>) => {
    const answer = await http.post<Subscription & { error?: string }>(path(), body, { bearer: project.ownerJwt });
    answers.push(answer.body);
    return answer;
  };
  const listed = async () => {
    const answer = await http.get<{ data: Subscription[] }>(path(), { bearer: project.ownerJwt });
    answers.push(answer.body);
    return answer.body.data;
  };
  const runsOf = async () =>
    (await sql<{ n: number }>(`SELECT count(*)::int AS n FROM invocation.invocation_views WHERE project_id = $1`, [project.projectId]))[0]!.n;

  beforeAll(async () => {
    certificate = await selfSignedCertificate();
    system = await startTestSystem([gatewayService, invocationService, deadLetterService], {
      logDestination: logs,
      logLevel: 'debug',
      environment: { OUTBOUND_ALLOWED_CIDRS: '127.0.0.0/8', WEBHOOK_PROVIDER_BUDGET_MS: '20000' },
    });
    webhook = await startWebhookProcess(system, certificate.caFile, { WEBHOOK_PROVIDER_BACKOFF_MS: '200', SHOPIFY_API_VERSION: '2026-07' });
    http = new HttpClient(system.url('gateway'));
    project = await createPublishedProject(http, 'AUTOMATION', SHOPIFY_AUTOMATION);
  }, 90_000);

  afterAll(async () => {
    await webhook?.stop();
    await system?.stop();
    for (const shop of shops) await shop.close();
    await certificate?.remove();
  });

  describe('creating', () => {
    it('creates one Shopify subscription per topic: 201 ACTIVE with the GIDs as providerId; the shop got the documented mutation', async () => {
      const { shop, credentials } = await newShop();
      const created = await subscribe({ provider: 'shopify', events: 'orders/create, orders/paid', credentials });
      expect(created.status).toBe(201);
      expect(created.body).toEqual({
        id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        provider: 'shopify',
        events: ['orders/create', 'orders/paid'],
        status: 'ACTIVE',
        endpoint: `${system.url('gateway')}/v1/hooks/${created.body.id}`,
        providerId: shop.subscriptions().map((s) => s.id).join(','),
        failureReason: null,
        createdAt: expect.any(String),
      });
      expect(created.body.providerId!.split(',')).toEqual([expect.stringMatching(GID), expect.stringMatching(GID)]);
      expect(shop.subscriptions().map(({ topic, uri, format }) => ({ topic, uri, format }))).toEqual([
        { topic: 'ORDERS_CREATE', uri: created.body.endpoint, format: 'JSON' },
        { topic: 'ORDERS_PAID', uri: created.body.endpoint, format: 'JSON' },
      ]);
      const calls = shop.mutations('webhookSubscriptionCreate');
      expect(calls.map((call) => [call.path, call.headers['x-shopify-access-token'], call.variables])).toEqual([
        ['/admin/api/2026-07/graphql.json', credentials.accessToken, { topic: 'ORDERS_CREATE', webhookSubscription: { uri: created.body.endpoint, format: 'JSON' } }],
        ['/admin/api/2026-07/graphql.json', credentials.accessToken, { topic: 'ORDERS_PAID', webhookSubscription: { uri: created.body.endpoint, format: 'JSON' } }],
      ]);
    });

    it('answers 400 for credentials or events Shopify could not take, and asks the shop nothing', async () => {
      const { shop, credentials } = await newShop();
      const cases: Array<[Record<string, unknown>, string]> = [
        [{ provider: 'shopify', events: 'orders/create', credentials: { ...credentials, storeDomain: 'https://x.myshopify.com/admin' } }, "credentials.storeDomain must be the shop's domain, such as your-store.myshopify.com"],
        [{ provider: 'shopify', events: 'orders/create', credentials: { ...credentials, accessToken: '' } }, 'credentials.accessToken is required'],
        [{ provider: 'shopify', events: 'orders/create', credentials: { storeDomain: credentials.storeDomain, accessToken: credentials.accessToken } }, 'credentials.apiSecret is required'],
        [{ provider: 'shopify', events: '*', credentials }, 'Shopify has no wildcard topic: name each topic, such as orders/create'],
        [{ provider: 'shopify', events: 'orders/create,ORDERS_PAID', credentials }, '"ORDERS_PAID" is not a Shopify webhook topic; topics look like orders/create or app/uninstalled'],
      ];
      for (const [body, error] of cases) {
        const answer = await subscribe(body);
        expect({ body, status: answer.status, error: answer.body.error }).toEqual({ body, status: 400, error });
      }
      expect(shop.requests).toEqual([]);
    });

    it('saves Shopify’s refusals as FAILED with Shopify’s own message (still 201), leaving nothing at the shop; retry makes it ACTIVE', async () => {
      const { shop, credentials } = await newShop();
      const wrongToken = await subscribe({ provider: 'shopify', events: 'orders/create', credentials: { ...credentials, accessToken: 'shpat_wrong' } });
      expect(wrongToken.status).toBe(201);
      expect(wrongToken.body).toMatchObject({ status: 'FAILED', providerId: null, failureReason: INVALID_TOKEN });

      const unknownTopic = await subscribe({ provider: 'shopify', events: 'orders/create,orders/teleported', credentials });
      expect(unknownTopic.status).toBe(201);
      expect(unknownTopic.body).toMatchObject({
        status: 'FAILED',
        providerId: null,
        failureReason: 'Variable $topic of type WebhookSubscriptionTopic! was provided invalid value: ORDERS_TELEPORTED',
      });
      // The topic made before the refusal was deleted again.
      expect(shop.subscriptions()).toEqual([]);

      shop.answerNext(shopifyAnswers.frozen());
      const frozen = await subscribe({ provider: 'shopify', events: 'orders/create', credentials });
      expect(frozen.body).toMatchObject({ status: 'FAILED', failureReason: 'Unavailable Shop' });
      const retried = await http.post<Subscription>(`${path()}/${frozen.body.id}/retry`, {}, { bearer: project.ownerJwt });
      answers.push(retried.body);
      expect(retried.status).toBe(200);
      expect(retried.body).toEqual({ ...frozen.body, status: 'ACTIVE', providerId: expect.stringMatching(GID), failureReason: null });
      expect(shop.subscriptions().map((s) => s.id)).toEqual([retried.body.providerId]);
    });

    it('retries a 429 after its Retry-After and a THROTTLED answer, then succeeds; three 5xx answers leave it FAILED', async () => {
      const { shop, credentials } = await newShop();
      shop.answerNext(shopifyAnswers.tooManyRequests(1), shopifyAnswers.throttled());
      const created = await subscribe({ provider: 'shopify', events: 'orders/create', credentials });
      expect([created.status, created.body.status, created.body.failureReason]).toEqual([201, 'ACTIVE', null]);
      const calls = shop.mutations('webhookSubscriptionCreate');
      expect(calls).toHaveLength(3);
      expect(calls[1]!.at - calls[0]!.at).toBeGreaterThanOrEqual(950);
      expect(shop.subscriptions().map((s) => s.id)).toEqual([created.body.providerId]);

      shop.answerNext(shopifyAnswers.unavailable(), shopifyAnswers.internalError(), shopifyAnswers.unavailable());
      const down = await subscribe({ provider: 'shopify', events: 'orders/paid', credentials });
      expect(down.body).toMatchObject({ status: 'FAILED', providerId: null, failureReason: 'Shopify answered 503 Service Unavailable' });
      expect(shop.mutations('webhookSubscriptionCreate')).toHaveLength(6);
    });
  });

  describe('deliveries', () => {
    let shop: ShopifyFake;
    let subscription: Subscription;
    beforeAll(async () => {
      const made = await newShop();
      shop = made.shop;
      const created = await subscribe({ provider: 'shopify', events: 'orders/create', credentials: made.credentials });
      expect(created.body.status).toBe('ACTIVE');
      subscription = created.body;
    });
    const run = async (invocationId: string) =>
      (
        await sql<{ status: string; source: string; mode: string; payload: Record<string, unknown>; result: Record<string, unknown> | null }>(
          `SELECT document->>'status' AS status, document->>'triggerSource' AS source, document->>'mode' AS mode,
                  document->'requestPayload' AS payload, document->'result' AS result
             FROM invocation.invocation_views WHERE id = $1`,
          [invocationId],
        )
      )[0];

    it('starts an async WEBHOOK run with the order as payload from an orders/create delivery the shop signed: 202', async () => {
      const delivery = await shop.deliver({ topic: 'orders/create', payload: ORDER });
      expect(delivery.status).toBe(202);
      expect(delivery.body).toEqual({ invocationId: expect.stringMatching(/^[0-9a-f-]{36}$/), status: expect.any(String) });
      const invocationId = (delivery.body as { invocationId: string }).invocationId;
      const row = await eventually('the run to succeed', async () => {
        const found = await run(invocationId);
        return found?.status === 'SUCCEEDED' ? found : undefined;
      });
      expect(row).toEqual({ status: 'SUCCEEDED', source: 'WEBHOOK', mode: 'ASYNC', payload: { payload: ORDER }, result: { ok: true, order: ORDER.id } });
    });

    it('answers 401 Invalid signature for another secret, a missing or a malformed X-Shopify-Hmac-Sha256, and runs nothing', async () => {
      const before = await runsOf();
      for (const options of [{ signWith: 'not-the-app-secret' }, { hmac: '' }, { hmac: 'c2hhMjU2PWFiYw==' }]) {
        const answer = await shop.deliver({ topic: 'orders/create', payload: ORDER, ...options });
        expect([answer.status, (answer.body as { error: string }).error]).toEqual([401, 'Invalid signature']);
      }
      expect(await runsOf()).toBe(before);
    });

    it('answers 409 with the first run for a repeated X-Shopify-Webhook-Id, and runs nothing again', async () => {
      const first = await shop.deliver({ topic: 'orders/create', payload: ORDER });
      expect(first.status).toBe(202);
      const before = await runsOf();
      const repeat = await shop.deliver({ topic: 'orders/create', payload: ORDER, webhookId: first.webhookId });
      expect(repeat.status).toBe(409);
      expect(repeat.body).toEqual({ error: 'Delivery already received', invocationId: (first.body as { invocationId: string }).invocationId });
      expect(await runsOf()).toBe(before);
    });

    it('answers 200 and runs nothing for a topic the subscription does not name', async () => {
      const before = await runsOf();
      const other = await shop.deliver({ topic: 'orders/cancelled', payload: ORDER, to: subscription.endpoint });
      expect(other.status).toBe(200);
      expect(other.body).toEqual({ ignored: true, reason: 'Event not subscribed' });
      expect(await runsOf()).toBe(before);
    });
  });

  describe('revoking', () => {
    it('deletes the subscriptions at the shop first: a Shopify failure answers 502 and changes nothing; then 204, REVOKED, and 410 at the endpoint', async () => {
      const { shop, credentials } = await newShop();
      const { body: subscription } = await subscribe({ provider: 'shopify', events: 'orders/create,orders/paid', credentials });
      expect(subscription.status).toBe('ACTIVE');

      shop.answerNext(shopifyAnswers.locked());
      const failing = await http.delete(`${path()}/${subscription.id}`, { bearer: project.ownerJwt });
      expect([failing.status, failing.body.error]).toEqual([502, 'The provider did not remove the webhook: This shop is locked']);
      expect((await listed()).find((entry) => entry.id === subscription.id)?.status).toBe('ACTIVE');
      expect(shop.subscriptions()).toHaveLength(2);
      expect((await shop.deliver({ topic: 'orders/create', payload: ORDER })).status).toBe(202);

      const deletesBefore = shop.mutations('webhookSubscriptionDelete').length;
      const revoked = await http.delete(`${path()}/${subscription.id}`, { bearer: project.ownerJwt });
      expect(revoked.status).toBe(204);
      const deletes = shop.mutations('webhookSubscriptionDelete').slice(deletesBefore);
      expect(deletes.map((call) => [call.headers['x-shopify-access-token'], call.variables])).toEqual(
        subscription.providerId!.split(',').map((id) => [credentials.accessToken, { id }]),
      );
      expect(shop.subscriptions()).toEqual([]);
      expect((await listed()).find((entry) => entry.id === subscription.id)).toEqual({ ...subscription, status: 'REVOKED' });

      const late = await shop.deliver({ topic: 'orders/create', payload: ORDER, to: subscription.endpoint });
      expect([late.status, (late.body as { error: string }).error]).toEqual([410, 'Webhook has been revoked']);
    });

    it('counts subscriptions the shop no longer has ("Webhook subscription does not exist") as removed', async () => {
      const { shop, credentials } = await newShop();
      const { body: subscription } = await subscribe({ provider: 'shopify', events: 'orders/create', credentials });
      shop.forget(subscription.providerId!);
      const revoked = await http.delete(`${path()}/${subscription.id}`, { bearer: project.ownerJwt });
      expect(revoked.status).toBe(204);
      expect((await listed()).find((entry) => entry.id === subscription.id)?.status).toBe('REVOKED');
    });
  });

  // Last: it looks at every answer and log line the tests above produced.
  describe('secrets', () => {
    it('shows no access token or client secret in any answer or log, nor in clear in the database', async () => {
      const answerText = JSON.stringify(answers);
      const logOutput = `${logText}\n${webhook.output()}`;
      expect(logOutput.length).toBeGreaterThan(1000);
      expect(secrets.length).toBeGreaterThan(8);
      const stored = JSON.stringify(await sql('SELECT * FROM webhook.webhook_subscriptions'));
      expectSecretsKeptOut(secrets, { answers: answerText, logs: logOutput, stored });
    });
  });
});
