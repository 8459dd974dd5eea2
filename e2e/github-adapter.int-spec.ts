import { OutboundGuard } from '@runline/outbound';
import { GithubAdapter, ProviderError, type ProviderCallContext } from '@runline/webhook-service';
import { startGithubFake, githubToken, type GithubFake } from './support/providers/github-fake.js';
import { selfSignedCertificate, startHttpsReceiver, type HttpsReceiver, type TestCertificate } from './support/https-receiver.js';

/**
 * The GitHub adapter against the GitHub fake over real HTTPS, through the real outbound guard
 * (loopback allowed as in tests, the fake's self-signed certificate trusted as a CA, TLS checks
 * on): what it sends, what it makes of GitHub's answers.
 */
async function waitFor(condition: () => boolean, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('GitHub adapter against the GitHub fake', () => {
  const adapter = new GithubAdapter();
  const REPO = 'octo-org/hello-world';
  let certificate: TestCertificate;
  let fake: GithubFake;
  let receiver: HttpsReceiver;
  let guard: OutboundGuard;
  let context: ProviderCallContext;
  let token: string;
  let hookUrl: string;
  let n = 0;

  beforeAll(async () => {
    certificate = await selfSignedCertificate();
    fake = await startGithubFake({ key: certificate.key, cert: certificate.cert, deliveryCa: certificate.cert });
    receiver = await startHttpsReceiver(certificate);
    guard = new OutboundGuard({ allowedCidrs: ['127.0.0.0/8'], ca: certificate.cert });
    context = { outbound: guard, apiBaseUrl: fake.url, timeoutMs: 5000 };
    token = githubToken();
    fake.grant(token, REPO);
  });
  afterAll(async () => {
    guard?.close();
    await fake?.close();
    await receiver?.close();
    await certificate?.remove();
  });
  beforeEach(() => {
    n += 1;
    hookUrl = `${receiver.url}/v1/hooks/hook-${n}`;
  });

  const credentials = (extra: Record<string, unknown> = {}) => {
    const parsed = adapter.parseCredentials({ token, repository: REPO, ...extra });
    if (!parsed.ok) throw new Error(parsed.error);
    return parsed.credentials;
  };
  const providerError = async (promise: Promise<unknown>): Promise<ProviderError> => {
    const error = await promise.then(
      () => undefined,
      (reason: unknown) => reason,
    );
    expect(error).toBeInstanceOf(ProviderError);
    return error as ProviderError;
  };

  it('creates the hook with GitHub’s documented request, and its ping verifies with the secret it returns', async () => {
    const secret = 'a-webhook-secret-of-my-own-0123';
    const created = await adapter.create(credentials({ webhookSecret: secret }), hookUrl, ['push', 'pull_request'], context);

    const call = fake.requests.at(-1)!;
    expect([call.method, call.path, call.status]).toEqual(['POST', `/repos/${REPO}/hooks`, 201]);
    expect(call.body).toEqual({ name: 'web', active: true, events: ['push', 'pull_request'], config: { url: hookUrl, content_type: 'json', secret, insecure_ssl: '0' } });
    expect(call.headers).toMatchObject({
      authorization: `Bearer ${token}`,
      accept: 'application/vnd.github+json',
      'x-github-api-version': '2022-11-28',
      'content-type': 'application/json',
    });
    expect(call.headers['user-agent']).toEqual(expect.any(String));

    const hook = fake.hooksOf(REPO).find((h) => h.config.url === hookUrl)!;
    expect(created).toEqual({ providerId: String(hook.id), signingSecret: secret });

    // Like GitHub, the fake pings the new hook; our scheme verifies it and classify ignores it.
    const ping = await fake.pinged(hook.id);
    const [received] = receiver.at(`/v1/hooks/hook-${n}`);
    const headers = Object.fromEntries(Object.entries(received!.headers).map(([name, value]) => [name, String(value)]));
    const delivery = { rawBody: received!.raw, headers, receivedAt: new Date() };
    expect(adapter.scheme.verify(delivery, created.signingSecret)).toEqual({ ok: true });
    expect(adapter.scheme.verify(delivery, 'another-secret-entirely')).toEqual({ ok: false, failure: 'invalid-signature' });
    expect(adapter.scheme.deliveryIdOf(delivery)).toBe(ping.deliveryId);
    expect(adapter.scheme.eventNameOf(delivery)).toBe('ping');
    expect(adapter.classify(adapter.scheme.eventNameOf(delivery), ['push', 'pull_request'])).toBe('ignore');

    // And any later event the hook subscribes to verifies and runs.
    await fake.deliver(hook.id, 'push', { ref: 'refs/heads/main' });
    const push = receiver.at(`/v1/hooks/hook-${n}`)[1]!;
    const pushDelivery = { rawBody: push.raw, headers: Object.fromEntries(Object.entries(push.headers).map(([k, v]) => [k, String(v)])), receivedAt: new Date() };
    expect(adapter.scheme.verify(pushDelivery, secret)).toEqual({ ok: true });
    expect(adapter.classify(adapter.scheme.eventNameOf(pushDelivery), ['push', 'pull_request'])).toBe('run');
  });

  it('generates a strong secret when none is given, a new one each time, and sends it to GitHub', async () => {
    const first = await adapter.create(credentials(), hookUrl, ['issues'], context);
    const second = await adapter.create(credentials(), `${hookUrl}-b`, ['issues'], context);
    expect(first.signingSecret).toMatch(/^[0-9a-f]{64}$/);
    expect(second.signingSecret).not.toBe(first.signingSecret);
    expect(fake.hook(Number(first.providerId))?.config.secret).toBe(first.signingSecret);
  });

  it('subscribes to * as GitHub allows; the deletion notice GitHub then sends (meta) starts nothing', async () => {
    const created = await adapter.create(credentials(), hookUrl, ['*'], context);
    expect(fake.hook(Number(created.providerId))?.events).toEqual(['*']);
    await fake.pinged(Number(created.providerId));
    expect(await adapter.remove(credentials(), created.providerId, context)).toBe('removed');
    await waitFor(() => receiver.at(`/v1/hooks/hook-${n}`).length === 2);
    const notice = receiver.at(`/v1/hooks/hook-${n}`)[1]!;
    const delivery = { rawBody: notice.raw, headers: Object.fromEntries(Object.entries(notice.headers).map(([k, v]) => [k, String(v)])), receivedAt: new Date() };
    expect(adapter.scheme.verify(delivery, created.signingSecret)).toEqual({ ok: true });
    expect(adapter.scheme.eventNameOf(delivery)).toBe('meta');
    expect(JSON.parse(notice.raw.toString('utf8'))).toMatchObject({ action: 'deleted', hook_id: Number(created.providerId) });
    expect(adapter.classify('meta', ['*'])).toBe('ignore');
  });

  it('deletes the hook (204), and a hook already gone (404) counts as removed', async () => {
    const created = await adapter.create(credentials(), hookUrl, ['push'], context);
    await fake.pinged(Number(created.providerId));
    expect(await adapter.remove(credentials(), created.providerId, context)).toBe('removed');
    const call = fake.requests.at(-1)!;
    expect([call.method, call.path, call.status]).toEqual(['DELETE', `/repos/${REPO}/hooks/${created.providerId}`, 204]);
    expect(call.headers).toMatchObject({ authorization: `Bearer ${token}`, 'x-github-api-version': '2022-11-28' });
    expect(fake.hooksOf(REPO).map((h) => h.id)).not.toContain(Number(created.providerId));

    expect(await adapter.remove(credentials(), created.providerId, context)).toBe('already-gone');
    expect(fake.requests.at(-1)!.status).toBe(404);
    expect(await adapter.remove(credentials(), '999999999', context)).toBe('already-gone');
  });

  it('refuses a provider id that is not a GitHub hook id without calling GitHub', async () => {
    const calls = fake.requests.length;
    const error = await providerError(adapter.remove(credentials(), '../../collaborators/x', context));
    expect([error.message, error.retryable]).toEqual(['"../../collaborators/x" is not a GitHub hook id', false]);
    expect(fake.requests.length).toBe(calls);
  });

  it('turns GitHub’s "no" into a ProviderError with GitHub’s message, not retried', async () => {
    const bad = await providerError(adapter.create(credentials({ token: githubToken() }), hookUrl, ['push'], context));
    expect([bad.message, bad.retryable, bad.status]).toEqual(['Bad credentials', false, 401]);

    const unknownRepo = adapter.parseCredentials({ token, repository: 'octo-org/not-mine' });
    if (!unknownRepo.ok) throw new Error(unknownRepo.error);
    const missing = await providerError(adapter.create(unknownRepo.credentials, hookUrl, ['push'], context));
    expect([missing.message, missing.retryable, missing.status]).toEqual(['Not Found', false, 404]);

    const reader = githubToken();
    fake.grant(reader, REPO, 'read');
    const forbidden = await providerError(adapter.create(credentials({ token: reader }), hookUrl, ['push'], context));
    expect([forbidden.message, forbidden.retryable, forbidden.status]).toEqual(['Resource not accessible by personal access token', false, 403]);

    await adapter.create(credentials(), hookUrl, ['push'], context);
    const duplicate = await providerError(adapter.create(credentials(), hookUrl, ['push'], context));
    expect([duplicate.message, duplicate.retryable, duplicate.status]).toEqual(['Validation Failed: Hook already exists on this repository', false, 422]);

    // An event the fake does not know: GitHub's validation answer, word for word as the fake gives it.
    const unknownEvent = await providerError(adapter.create(credentials(), `${hookUrl}-x`, ['watch', 'sub_issues'], context));
    expect([unknownEvent.message, unknownEvent.retryable, unknownEvent.status]).toEqual(['Validation Failed: Hook events are not supported: sub_issues', false, 422]);
  });

  it('retries rate limits with the wait GitHub asks for, and server errors', async () => {
    fake.rateLimitNext('primary', 1, 120);
    const primary = await providerError(adapter.create(credentials(), hookUrl, ['push'], context));
    expect([primary.message, primary.retryable, primary.status]).toEqual(['API rate limit exceeded for user ID 583231.', true, 403]);
    expect(primary.retryAfterMs).toBeGreaterThan(115_000);
    expect(primary.retryAfterMs).toBeLessThanOrEqual(120_000);

    fake.rateLimitNext('secondary', 1, 30);
    const secondary = await providerError(adapter.create(credentials(), hookUrl, ['push'], context));
    expect([secondary.message, secondary.retryable, secondary.status, secondary.retryAfterMs]).toEqual([
      'You have exceeded a secondary rate limit. Please wait a few minutes before you try again.',
      true,
      403,
      30_000,
    ]);

    fake.rateLimitNext('too-many-requests', 1, 7);
    const tooMany = await providerError(adapter.remove(credentials(), '123', context));
    expect([tooMany.retryable, tooMany.status, tooMany.retryAfterMs]).toEqual([true, 429, 7000]);

    fake.failNext(502);
    const server = await providerError(adapter.create(credentials(), hookUrl, ['push'], context));
    expect([server.message, server.retryable, server.status]).toEqual(['Server Error', true, 502]);

    // The refusals were used up: the next try goes through.
    const created = await adapter.create(credentials(), hookUrl, ['push'], context);
    expect(fake.hook(Number(created.providerId))).toBeDefined();
  });

  it('retries a GitHub that cannot be reached or does not answer in time; a URL the guard refuses is a "no"', async () => {
    const closed = await startHttpsReceiver(certificate);
    const closedUrl = closed.url;
    await closed.close();
    const unreachable = await providerError(adapter.create(credentials(), hookUrl, ['push'], { ...context, apiBaseUrl: closedUrl }));
    expect(unreachable.retryable).toBe(true);
    expect(unreachable.message).toBe('Could not reach the provider: network error reaching 127.0.0.1: connection refused');

    const slow = await startHttpsReceiver(certificate);
    slow.on(`/repos/${REPO}/hooks`, () => ({ status: 201, delayMs: 2000 }));
    try {
      const late = await providerError(adapter.create(credentials(), hookUrl, ['push'], { ...context, apiBaseUrl: slow.url, timeoutMs: 200 }));
      expect([late.message, late.retryable]).toEqual(['Could not reach the provider: timed out after 200 ms', true]);
    } finally {
      await slow.close();
    }

    const strictGuard = new OutboundGuard({ ca: certificate.cert });
    try {
      const refused = await providerError(adapter.create(credentials(), hookUrl, ['push'], { ...context, outbound: strictGuard }));
      expect(refused.retryable).toBe(false);
      expect(refused.message).toMatch(/^Could not reach the provider: refused: 127\.0\.0\.1 is /);
    } finally {
      strictGuard.close();
    }
  });

  it('refuses an answer without a hook id', async () => {
    const odd = await startHttpsReceiver(certificate);
    try {
      const error = await providerError(adapter.create(credentials(), hookUrl, ['push'], { ...context, apiBaseUrl: odd.url }));
      expect([error.message, error.retryable, error.status]).toEqual(['GitHub answered without a hook id', false, 200]);
    } finally {
      await odd.close();
    }
  });
});
