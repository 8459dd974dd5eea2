import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { OutboundGuard } from '@runline/outbound';
import { ProviderError, ShopifyAdapter, type ProviderCallContext } from '@runline/webhook-service';
import { selfSignedCertificate, type TestCertificate } from './support/https-receiver.js';
import { shopifyAnswers, startShopifyFake, type ShopifyFake } from './support/providers/shopify-fake.js';

const ACCESS_TOKEN = 'shpat_runline_test_0123456789';
const API_SECRET = 'shopify-app-client-secret';
const ENDPOINT = 'https://hooks.runline.example/v1/hooks/7f4c1b9e-6f0e-4d55-9d8e-2f1f3c1a0b01';
const INVALID_TOKEN = '[API] Invalid API key or access token (unrecognized login or wrong password)';

/**
 * The Shopify adapter against the local Shopify fake, over real HTTPS through the real outbound
 * guard (loopback allowed as OUTBOUND_ALLOWED_CIDRS=127.0.0.0/8 does in tests; the fake's
 * self-signed certificate as the guard's certificate authority, since NODE_EXTRA_CA_CERTS is
 * read only when a process starts).
 */
describe('Shopify adapter against the Shopify fake', () => {
  let certificate: TestCertificate;
  let fake: ShopifyFake;
  let guard: OutboundGuard;
  let context: ProviderCallContext;
  const adapter = new ShopifyAdapter();
  const credentials = () => ({ storeDomain: fake.storeDomain, accessToken: ACCESS_TOKEN, apiSecret: API_SECRET });

  /** The ProviderError a call rejects with. */
  async function providerError(call: Promise<unknown>): Promise<ProviderError> {
    const error: unknown = await call.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ProviderError);
    return error as ProviderError;
  }
  const shape = (error: ProviderError) => ({ message: error.message, retryable: error.retryable, status: error.status, retryAfterMs: error.retryAfterMs });

  beforeAll(async () => {
    certificate = await selfSignedCertificate();
    guard = new OutboundGuard({ allowedCidrs: ['127.0.0.0/8'], ca: certificate.cert });
    context = { outbound: guard, apiBaseUrl: null, timeoutMs: 5000 };
  });
  beforeEach(async () => {
    fake = await startShopifyFake({ certificate, accessToken: ACCESS_TOKEN, apiSecret: API_SECRET });
  });
  afterEach(async () => {
    await fake.close();
  });
  afterAll(async () => {
    guard.close();
    await certificate.remove();
  });

  it('creates one subscription per topic with webhookSubscriptionCreate, and deletes them all', async () => {
    const created = await adapter.create(credentials(), ENDPOINT, ['orders/create', 'orders/paid', 'orders/create'], context);

    const subscriptions = fake.subscriptions();
    expect(subscriptions.map(({ topic, uri, format }) => ({ topic, uri, format }))).toEqual([
      { topic: 'ORDERS_CREATE', uri: ENDPOINT, format: 'JSON' },
      { topic: 'ORDERS_PAID', uri: ENDPOINT, format: 'JSON' },
    ]);
    expect(created).toEqual({ providerId: subscriptions.map((s) => s.id).join(','), signingSecret: API_SECRET });
    expect(created.providerId).toMatch(/^gid:\/\/shopify\/WebhookSubscription\/\d+,gid:\/\/shopify\/WebhookSubscription\/\d+$/);

    const [first] = fake.mutations('webhookSubscriptionCreate');
    expect(first).toMatchObject({
      method: 'POST',
      path: '/admin/api/2026-10/graphql.json',
      headers: { 'x-shopify-access-token': ACCESS_TOKEN, 'content-type': 'application/json' },
      variables: { topic: 'ORDERS_CREATE', webhookSubscription: { uri: ENDPOINT, format: 'JSON' } },
    });
    expect(first!.query).toMatch(/^mutation \w+\(\$topic: WebhookSubscriptionTopic!, \$webhookSubscription: WebhookSubscriptionInput!\)/);

    await expect(adapter.remove(credentials(), created.providerId, context)).resolves.toBe('removed');
    expect(fake.subscriptions()).toEqual([]);
    expect(fake.mutations('webhookSubscriptionDelete').map((request) => request.variables)).toEqual(subscriptions.map((s) => ({ id: s.id })));
  });

  it('counts a subscription Shopify no longer has as already gone ("Webhook subscription does not exist")', async () => {
    const { providerId } = await adapter.create(credentials(), ENDPOINT, ['orders/create'], context);
    await expect(adapter.remove(credentials(), providerId, context)).resolves.toBe('removed');
    await expect(adapter.remove(credentials(), providerId, context)).resolves.toBe('already-gone');
    await expect(adapter.remove(credentials(), 'gid://shopify/WebhookSubscription/42', context)).resolves.toBe('already-gone');
  });

  it('removes what is left when only some of the topics are still there', async () => {
    const { providerId } = await adapter.create(credentials(), ENDPOINT, ['orders/create', 'products/update'], context);
    await adapter.remove(credentials(), providerId.split(',')[0]!, context);
    await expect(adapter.remove(credentials(), providerId, context)).resolves.toBe('removed');
    expect(fake.subscriptions()).toEqual([]);
  });

  it.each([
    ['http://hooks.runline.example/v1/hooks/x', 'Address protocol http:// is not supported'],
    ['https://127.0.0.1/v1/hooks/x', 'Address cannot be a Shopify or an internal domain'],
    ['not a url', 'Address is not a valid URL'],
  ])('refuses the address %s with Shopify\'s userError message, not retryable', async (endpoint, message) => {
    const error = await providerError(adapter.create(credentials(), endpoint, ['orders/create'], context));
    expect(shape(error)).toEqual({ message, retryable: false, status: null, retryAfterMs: null });
    expect(fake.subscriptions()).toEqual([]);
  });

  it('refuses a second subscription of a topic to one address with Shopify\'s userError', async () => {
    await adapter.create(credentials(), ENDPOINT, ['orders/create'], context);
    const error = await providerError(adapter.create(credentials(), ENDPOINT, ['orders/create'], context));
    expect(shape(error)).toEqual({ message: 'Address for this topic has already been taken', retryable: false, status: null, retryAfterMs: null });
  });

  it('refuses an unknown topic with Shopify\'s GraphQL error, and deletes the topics already made', async () => {
    const error = await providerError(adapter.create(credentials(), ENDPOINT, ['orders/create', 'orders/teleported'], context));
    expect(shape(error)).toEqual({
      message: 'Variable $topic of type WebhookSubscriptionTopic! was provided invalid value: ORDERS_TELEPORTED',
      retryable: false,
      status: 200,
      retryAfterMs: null,
    });
    expect(fake.mutations('webhookSubscriptionCreate')).toHaveLength(2);
    expect(fake.mutations('webhookSubscriptionDelete')).toHaveLength(1);
    expect(fake.subscriptions()).toEqual([]);
  });

  it('refuses a wrong access token with Shopify\'s 401 message, for create and delete', async () => {
    const wrong = { ...credentials(), accessToken: 'shpat_wrong' };
    expect(shape(await providerError(adapter.create(wrong, ENDPOINT, ['orders/create'], context)))).toEqual({ message: INVALID_TOKEN, retryable: false, status: 401, retryAfterMs: null });
    expect(shape(await providerError(adapter.remove(wrong, 'gid://shopify/WebhookSubscription/1', context)))).toEqual({ message: INVALID_TOKEN, retryable: false, status: 401, retryAfterMs: null });
  });

  it.each([
    ['frozen shop (402)', shopifyAnswers.frozen(), { message: 'Unavailable Shop', retryable: false, status: 402, retryAfterMs: null }],
    ['missing scope (403)', shopifyAnswers.forbidden(), { message: 'This action requires merchant approval for write_webhooks scope.', retryable: false, status: 403, retryAfterMs: null }],
    ['locked shop (423)', shopifyAnswers.locked(), { message: 'This shop is locked', retryable: false, status: 423, retryAfterMs: null }],
    ['429 with Retry-After', shopifyAnswers.tooManyRequests(2), { message: 'Exceeded 2 calls per second for api client. Reduce request rates to resume uninterrupted service.', retryable: true, status: 429, retryAfterMs: 2000 }],
    ['THROTTLED query cost', shopifyAnswers.throttled(), { message: 'Throttled', retryable: true, status: 200, retryAfterMs: 100 }],
    ['500', shopifyAnswers.internalError(), { message: 'Internal Server Error', retryable: true, status: 500, retryAfterMs: null }],
    ['503 HTML page with Retry-After', shopifyAnswers.unavailable(7), { message: 'Shopify answered 503 Service Unavailable', retryable: true, status: 503, retryAfterMs: 7000 }],
  ])('maps a %s to a ProviderError, retryable only for 429, throttling and 5xx', async (_name, answer, expected) => {
    fake.answerNext(answer);
    expect(shape(await providerError(adapter.create(credentials(), ENDPOINT, ['orders/create'], context)))).toEqual(expected);
    fake.answerNext(answer);
    expect(shape(await providerError(adapter.remove(credentials(), 'gid://shopify/WebhookSubscription/1', context)))).toEqual(expected);
    expect(fake.subscriptions()).toEqual([]);
  });

  it('speaks the configured API version; a 404 (no such shop or version) is a "no"', async () => {
    await adapter.create(credentials(), ENDPOINT, ['orders/create'], context);
    await adapter.create(credentials(), `${ENDPOINT}-1`, ['orders/create'], { ...context, apiVersion: '2026-07' });
    await adapter.create(credentials(), `${ENDPOINT}-u`, ['orders/create'], { ...context, apiVersion: 'unstable' });
    expect(fake.requests.map((request) => request.path)).toEqual(['/admin/api/2026-10/graphql.json', '/admin/api/2026-07/graphql.json', '/admin/api/unstable/graphql.json']);

    fake.answerNext({ status: 404, body: { errors: 'Not Found' } });
    const error = await providerError(adapter.create(credentials(), `${ENDPOINT}-2`, ['orders/create'], context));
    expect(shape(error)).toEqual({ message: 'Not Found', retryable: false, status: 404, retryAfterMs: null });
  });

  it('a timeout and a refused connection are retryable; an address the outbound guard refuses is not', async () => {
    fake.answerNext({ ...shopifyAnswers.internalError(), status: 200, delayMs: 3000 });
    const timeout = await providerError(adapter.create(credentials(), ENDPOINT, ['orders/create'], { ...context, timeoutMs: 300 }));
    expect(shape(timeout)).toEqual({ message: 'Could not reach the provider: timed out after 300 ms', retryable: true, status: null, retryAfterMs: null });

    const closed = await startShopifyFake({ certificate, accessToken: ACCESS_TOKEN, apiSecret: API_SECRET });
    await closed.close();
    const refused = await providerError(adapter.create({ ...credentials(), storeDomain: closed.storeDomain }, ENDPOINT, ['orders/create'], context));
    expect(shape(refused)).toEqual({ message: 'Could not reach the provider: network error reaching 127.0.0.1: connection refused', retryable: true, status: null, retryAfterMs: null });

    const strict = new OutboundGuard({ ca: certificate.cert });
    const guarded = await providerError(adapter.create(credentials(), ENDPOINT, ['orders/create'], { ...context, outbound: strict }));
    strict.close();
    expect(shape(guarded)).toEqual({ message: 'Could not reach the provider: refused: 127.0.0.1 is a loopback address', retryable: false, status: null, retryAfterMs: null });
  });

  it('verifies the deliveries the fake signs as Shopify does, and names them by X-Shopify-Webhook-Id and X-Shopify-Topic', async () => {
    const received: Array<{ headers: IncomingHttpHeaders; body: Buffer }> = [];
    const receiver = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        received.push({ headers: req.headers, body: Buffer.concat(chunks) });
        res.writeHead(200).end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const to = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
    try {
      const sent = await fake.deliver({ to, topic: 'orders/create', payload: { id: 450789469, total_price: '254.98' } });
      await fake.deliver({ to, topic: 'orders/create', payload: { id: 1 }, signWith: 'another-secret' });
      const [good, forged] = received.map(({ headers, body }) => ({
        rawBody: body,
        headers: Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, String(value)])),
        receivedAt: new Date(),
      }));
      expect(adapter.scheme.verify(good!, API_SECRET)).toEqual({ ok: true });
      expect(adapter.scheme.deliveryIdOf(good!)).toBe(sent.webhookId);
      expect(adapter.scheme.eventNameOf(good!)).toBe('orders/create');
      expect(good!.headers).toMatchObject({ 'x-shopify-shop-domain': 'runline-test.myshopify.com', 'x-shopify-api-version': '2026-10' });
      expect(adapter.classify(adapter.scheme.eventNameOf(good!), ['orders/create'])).toBe('run');
      expect(adapter.classify(adapter.scheme.eventNameOf(good!), ['orders/paid'])).toBe('ignore');
      expect(adapter.scheme.verify(forged!, API_SECRET)).toEqual({ ok: false, failure: 'invalid-signature' });
    } finally {
      await new Promise<void>((resolve) => receiver.close(() => resolve()));
    }
  });

  it('refuses an API version that is not one of Shopify\'s, asking the shop nothing', async () => {
    for (const apiVersion of ['2026-11', 'latest', '../2026-10']) {
      const error = await providerError(adapter.create(credentials(), ENDPOINT, ['orders/create'], { ...context, apiVersion }));
      expect(shape(error)).toEqual({ message: `Not a Shopify API version: "${apiVersion}"`, retryable: false, status: null, retryAfterMs: null });
    }
    expect(fake.requests).toEqual([]);
  });
});
