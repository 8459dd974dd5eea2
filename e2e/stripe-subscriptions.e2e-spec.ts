import { randomBytes, randomUUID } from 'node:crypto';
import { PassThrough } from 'node:stream';
import { deadLetterService } from '@runline/dead-letter-service';
import { gatewayService } from '@runline/gateway-service';
import { invocationService } from '@runline/invocation-service';
import { consoleJwt, HttpClient, queryDatabase, startTestSystem, type TestSystem } from '@runline/testing';
import { createProject, createPublishedProject, issueToken, type ProjectFixture } from './gateway-fixtures.js';
import { selfSignedCertificate, type TestCertificate } from './support/https-receiver.js';
import { eventually } from './support/lifecycle-support.js';
import type { RunningProcess } from './support/processes.js';
import { startStripeFake, type StripeFake } from './support/providers/stripe-fake.js';
import { expectSecretsKeptOut, type Subscription } from './support/subscriptions-support.js';
import { startWebhookProcess } from './support/webhook-process.js';


/** An automation whose trigger expects what every Stripe Event has: its id and type. */
const STRIPE_AUTOMATION = {
  schemaVersion: 1,
  workflow: {
    trigger: { externalEnabled: true, key: 'stripe_event', expectedPayload: { id: '', type: '' } },
    start: 'n1',
    nodes: { n1: { type: 'return', value: "{ 'ok': true, 'event': payload.type }" } },
  },
};

const newKey = () => `sk_test_${randomBytes(18).toString('hex')}`;

/**
 * Managed Stripe subscriptions end to end (DESIGN section 9): console routes over HTTP, the
 * webhook service (its own process, trusting the fake's certificate) creating and removing
 * endpoints at a local Stripe over HTTPS through the outbound guard, and Stripe's signed
 * deliveries to the endpoint.
 */
describe('Stripe subscriptions', () => {
  let certificate: TestCertificate;
  let stripe: StripeFake;
  let system: TestSystem;
  let webhook: RunningProcess;
  let http: HttpClient;
  let project: ProjectFixture;
  const logs = new PassThrough();
  let logText = '';
  logs.on('data', (chunk: Buffer) => (logText += chunk.toString()));
  const sql = <T>(query: string, parameters: unknown[] = []) => queryDatabase(system.database.url, query, parameters) as Promise<T[]>;
  /** Every secret key and signing secret the tests used: none may show in an answer or a log. */
  const secrets: string[] = [];
  const answers: unknown[] = [];

  const path = (of: ProjectFixture = project) => `/v1/orgs/${of.orgId}/projects/${of.projectId}/webhook-subscriptions`;
  const subscribe = async (body: Record<string, unknown>, of: ProjectFixture = project) => {
    const answer = await http.post<Subscription & { error?: string }>(path(of), body, { bearer: of.ownerJwt });
    answers.push(answer.body);
    return answer;
  };
  const stripeSubscription = async (events = 'charge.succeeded, customer.created') => {
    const key = newKey();
    secrets.push(key);
    stripe.acceptKey(key);
    const created = await subscribe({ provider: 'stripe', events, credentials: { secretKey: key } });
    expect([created.status, created.body.status]).toEqual([201, 'ACTIVE']);
    secrets.push(stripe.endpoints.get(created.body.providerId!)!.secret);
    return { key, subscription: created.body };
  };
  const listed = async () => {
    const answer = await http.get<{ data: Subscription[] }>(path(), { bearer: project.ownerJwt });
    answers.push(answer.body);
    return answer.body.data;
  };
  const runsOf = async (of: ProjectFixture) =>
    (await sql<{ n: number }>(`SELECT count(*)::int AS n FROM invocation.invocation_views WHERE project_id = $1`, [of.projectId]))[0]!.n;
  const stripeCalls = (method: string, prefix = '/v1/webhook_endpoints') => stripe.requests.filter((request) => request.method === method && request.path.startsWith(prefix));

  beforeAll(async () => {
    certificate = await selfSignedCertificate();
    stripe = await startStripeFake(certificate);
    system = await startTestSystem([gatewayService, invocationService, deadLetterService], {
      logDestination: logs,
      logLevel: 'debug',
      environment: { OUTBOUND_ALLOWED_CIDRS: '127.0.0.0/8', WEBHOOK_PROVIDER_BUDGET_MS: '20000' },
    });
    webhook = await startWebhookProcess(system, certificate.caFile, { STRIPE_API_URL: stripe.url, WEBHOOK_PROVIDER_BACKOFF_MS: '200' });
    http = new HttpClient(system.url('gateway'));
    project = await createPublishedProject(http, 'AUTOMATION', STRIPE_AUTOMATION);
  }, 90_000);

  afterAll(async () => {
    await webhook?.stop();
    await system?.stop();
    await stripe?.close();
    await certificate?.remove();
  });

  describe('creating', () => {
    it('creates the endpoint at Stripe: 201 ACTIVE with endpoint and providerId; Stripe got the documented form body', async () => {
      const key = newKey();
      secrets.push(key);
      stripe.acceptKey(key);
      const before = stripeCalls('POST').length;
      const created = await subscribe({ provider: 'stripe', events: 'charge.succeeded, customer.created', credentials: { secretKey: key } });
      expect(created.status).toBe(201);
      expect(created.body).toEqual({
        id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        provider: 'stripe',
        events: ['charge.succeeded', 'customer.created'],
        status: 'ACTIVE',
        endpoint: `${system.url('gateway')}/v1/hooks/${created.body.id}`,
        providerId: expect.stringMatching(/^we_/),
        failureReason: null,
        createdAt: expect.any(String),
      });
      const calls = stripeCalls('POST').slice(before);
      expect(calls).toHaveLength(1);
      expect(calls[0]!.path).toBe('/v1/webhook_endpoints');
      expect(calls[0]!.headers.authorization).toBe(`Bearer ${key}`);
      expect(calls[0]!.headers['content-type']).toBe('application/x-www-form-urlencoded');
      expect(calls[0]!.raw).toBe(
        `url=${encodeURIComponent(created.body.endpoint)}&enabled_events%5B%5D=charge.succeeded&enabled_events%5B%5D=customer.created`,
      );
      const endpoint = stripe.endpoints.get(created.body.providerId!);
      expect(endpoint).toMatchObject({ url: created.body.endpoint, enabledEvents: ['charge.succeeded', 'customer.created'] });
      secrets.push(endpoint!.secret);
    });

    it('answers 409 before the project is published, and asks Stripe nothing', async () => {
      const draft = await createProject(http, 'AUTOMATION');
      const before = stripe.requests.length;
      const answer = await subscribe({ provider: 'stripe', events: 'charge.succeeded', credentials: { secretKey: newKey() } }, draft);
      expect([answer.status, answer.body.error]).toEqual([409, 'Publish the project before adding a subscription']);
      expect(stripe.requests.length).toBe(before);
    });

    it('answers 400 for an unknown provider, bad events or credentials, and asks Stripe nothing', async () => {
      const before = stripe.requests.length;
      const credentials = { secretKey: newKey() };
      const cases: Array<[Record<string, unknown>, string | RegExp]> = [
        [{ events: 'charge.succeeded', credentials }, 'provider is required'],
        [{ provider: 'stripe', credentials }, 'events is required'],
        [{ provider: 'stripe', events: 'charge.succeeded' }, 'credentials is required'],
        [{ provider: 'stripe', events: 'charge.succeeded', credentials: 'sk_test_x' }, 'credentials must be an object'],
        [{ provider: 'paypal', events: 'charge.succeeded', credentials }, /^provider must be one of (\w+, )*stripe(, \w+)*$/],
        [{ provider: 'stripe', events: ' , ', credentials }, 'events must be comma-separated event names, at least one'],
        [{ provider: 'stripe', events: 'charge.succeeded,Charge Failed', credentials }, '"Charge Failed" is not a Stripe event name (such as charge.succeeded, or * for all)'],
        [{ provider: 'stripe', events: 'charge.succeeded', credentials: {} }, 'credentials.secretKey must be a Stripe secret key (sk_live_…, sk_test_… or a restricted rk_… key)'],
        [{ provider: 'stripe', events: 'charge.succeeded', credentials: { secretKey: 'pk_test_1234567890' } }, 'credentials.secretKey must be a Stripe secret key (sk_live_…, sk_test_… or a restricted rk_… key)'],
      ];
      for (const [body, error] of cases) {
        const answer = await subscribe(body);
        expect({ body, status: answer.status }).toEqual({ body, status: 400 });
        if (typeof error === 'string') expect(answer.body.error).toBe(error);
        else expect(answer.body.error).toMatch(error);
      }
      expect(stripe.requests.length).toBe(before);
    });

    it('saves a Stripe refusal as FAILED with Stripe’s own message (still 201); retry makes it ACTIVE', async () => {
      const key = newKey();
      secrets.push(key);
      const failed = await subscribe({ provider: 'stripe', events: 'charge.succeeded', credentials: { secretKey: key } });
      expect(failed.status).toBe(201);
      expect(failed.body).toMatchObject({ status: 'FAILED', providerId: null, failureReason: `Invalid API Key provided: sk_test_${'*'.repeat(32)}${key.slice(-4)}` });

      stripe.acceptKey(key);
      const retried = await http.post<Subscription>(`${path()}/${failed.body.id}/retry`, {}, { bearer: project.ownerJwt });
      answers.push(retried.body);
      expect(retried.status).toBe(200);
      expect(retried.body).toEqual({ ...failed.body, status: 'ACTIVE', providerId: expect.stringMatching(/^we_/), failureReason: null });
      secrets.push(stripe.endpoints.get(retried.body.providerId!)!.secret);

      const again = await http.post(`${path()}/${failed.body.id}/retry`, {}, { bearer: project.ownerJwt });
      expect([again.status, again.body.error]).toEqual([409, 'Only a FAILED subscription can be retried']);
      const unknown = await http.post(`${path()}/${randomUUID()}/retry`, {}, { bearer: project.ownerJwt });
      expect([unknown.status, unknown.body.error]).toEqual([404, 'Subscription not found']);
    });

    it('saves an event Stripe does not know as FAILED with Stripe’s validation message', async () => {
      const key = newKey();
      secrets.push(key);
      stripe.acceptKey(key);
      const failed = await subscribe({ provider: 'stripe', events: 'charge.succeeded,charge.exploded', credentials: { secretKey: key } });
      expect(failed.status).toBe(201);
      expect(failed.body.status).toBe('FAILED');
      expect(failed.body.failureReason).toMatch(/^Invalid enabled_events\[1\]: must be one of /);
    });

    it('retries a 429 after Stripe’s Retry-After and 5xx answers with backoff, within a bounded number of tries', async () => {
      const key = newKey();
      secrets.push(key);
      stripe.acceptKey(key);
      let before = stripeCalls('POST').length;
      stripe.failNext({ status: 429, retryAfterSeconds: 1 });
      const limited = await subscribe({ provider: 'stripe', events: 'charge.succeeded', credentials: { secretKey: key } });
      expect([limited.status, limited.body.status]).toEqual([201, 'ACTIVE']);
      let calls = stripeCalls('POST').slice(before);
      expect(calls).toHaveLength(2);
      expect(calls[1]!.at - calls[0]!.at).toBeGreaterThanOrEqual(950);

      before = stripeCalls('POST').length;
      stripe.failNext({ status: 503 }, 2);
      const unavailable = await subscribe({ provider: 'stripe', events: 'charge.succeeded', credentials: { secretKey: key } });
      expect([unavailable.status, unavailable.body.status]).toEqual([201, 'ACTIVE']);
      calls = stripeCalls('POST').slice(before);
      expect(calls).toHaveLength(3);
      // Backoff 200 ms, then 400 ms (WEBHOOK_PROVIDER_BACKOFF_MS=200, doubled).
      expect(calls[1]!.at - calls[0]!.at).toBeGreaterThanOrEqual(190);
      expect(calls[2]!.at - calls[1]!.at).toBeGreaterThanOrEqual(390);

      before = stripeCalls('POST').length;
      stripe.failNext({ status: 500 }, 3);
      const down = await subscribe({ provider: 'stripe', events: 'charge.succeeded', credentials: { secretKey: key } });
      expect(down.status).toBe(201);
      expect(down.body).toMatchObject({ status: 'FAILED', failureReason: 'An unknown error occurred', providerId: null });
      expect(stripeCalls('POST').slice(before)).toHaveLength(3);
      for (const subscription of [limited.body, unavailable.body]) secrets.push(stripe.endpoints.get(subscription.providerId!)!.secret);
    });
  });

  describe('deliveries', () => {
    let subscription: Subscription;
    beforeAll(async () => {
      ({ subscription } = await stripeSubscription());
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

    it('starts an async WEBHOOK run with the Event as payload from a delivery Stripe signed: 202', async () => {
      const delivery = await stripe.send(subscription.providerId!, 'charge.succeeded');
      expect(delivery.status).toBe(202);
      expect(delivery.body).toEqual({ invocationId: expect.stringMatching(/^[0-9a-f-]{36}$/), status: expect.any(String) });
      const row = await eventually('the run to succeed', async () => {
        const found = await run(delivery.body.invocationId as string);
        return found?.status === 'SUCCEEDED' ? found : undefined;
      });
      // An automation's payload is the body: the Event exactly as Stripe sent it.
      expect(row).toEqual({ status: 'SUCCEEDED', source: 'WEBHOOK', mode: 'ASYNC', payload: { payload: JSON.parse(delivery.raw) }, result: { ok: true, event: 'charge.succeeded' } });
    });

    it('answers 401 Invalid signature for another secret or no signature, and 401 for a stale timestamp', async () => {
      const before = await runsOf(project);
      const wrong = await stripe.send(subscription.providerId!, 'charge.succeeded', { secret: 'whsec_not_the_endpoints' });
      expect([wrong.status, wrong.body.error]).toEqual([401, 'Invalid signature']);
      const none = await stripe.send(subscription.providerId!, 'charge.succeeded', { signatureHeader: '' });
      expect([none.status, none.body.error]).toEqual([401, 'Invalid signature']);
      const v0Only = await stripe.send(subscription.providerId!, 'charge.succeeded', { signatureHeader: `t=${Math.floor(Date.now() / 1000)},v0=${'0'.repeat(64)}` });
      expect([v0Only.status, v0Only.body.error]).toEqual([401, 'Invalid signature']);
      const stale = await stripe.send(subscription.providerId!, 'charge.succeeded', { timestamp: Math.floor(Date.now() / 1000) - 301 });
      expect([stale.status, stale.body.error]).toEqual([401, 'Timestamp outside the tolerance']);
      expect(await runsOf(project)).toBe(before);
    });

    it('accepts a delivery signed twice during a secret rotation (two v1, one of them ours)', async () => {
      const rotated = await stripe.send(subscription.providerId!, 'customer.created', { rotatedFrom: 'whsec_the_previous_secret' });
      expect(rotated.status).toBe(202);
    });

    it('answers 409 with the first run for a repeated Event id, and runs nothing again', async () => {
      const first = await stripe.send(subscription.providerId!, 'charge.succeeded');
      expect(first.status).toBe(202);
      const before = await runsOf(project);
      const repeat = await stripe.send(subscription.providerId!, 'charge.succeeded', { eventId: first.eventId });
      expect(repeat.status).toBe(409);
      expect(repeat.body).toEqual({ error: 'Delivery already received', invocationId: first.body.invocationId });
      expect(await runsOf(project)).toBe(before);
    });

    it('answers 200 and runs nothing for an event the subscription does not name', async () => {
      const before = await runsOf(project);
      const other = await stripe.send(subscription.providerId!, 'invoice.paid');
      expect(other.status).toBe(200);
      expect(other.body).toEqual({ ignored: true, reason: 'Event not subscribed' });
      // Ignored before its id is recorded: the same Event for a subscribed type would still run.
      expect(await runsOf(project)).toBe(before);
    });
  });

  describe('revoking', () => {
    it('removes the endpoint at Stripe first: a Stripe failure answers 502 and changes nothing; then 204, REVOKED, and 410 at the endpoint', async () => {
      const { key, subscription } = await stripeSubscription('charge.succeeded');
      const endpoint = stripe.endpoints.get(subscription.providerId!)!;

      stripe.failNext({ status: 500 }, 3);
      const failing = await http.delete(`${path()}/${subscription.id}`, { bearer: project.ownerJwt });
      expect([failing.status, failing.body.error]).toEqual([502, 'The provider did not remove the webhook: An unknown error occurred']);
      expect((await listed()).find((entry) => entry.id === subscription.id)?.status).toBe('ACTIVE');
      expect((await stripe.send(endpoint, 'charge.succeeded')).status).toBe(202);

      const deletesBefore = stripeCalls('DELETE').length;
      const revoked = await http.delete(`${path()}/${subscription.id}`, { bearer: project.ownerJwt });
      expect(revoked.status).toBe(204);
      const deletes = stripeCalls('DELETE').slice(deletesBefore);
      expect(deletes.map((call) => [call.path, call.headers.authorization])).toEqual([[`/v1/webhook_endpoints/${subscription.providerId}`, `Bearer ${key}`]]);
      expect(stripe.endpoints.has(subscription.providerId!)).toBe(false);
      expect((await listed()).find((entry) => entry.id === subscription.id)).toEqual({ ...subscription, status: 'REVOKED' });

      const late = await stripe.send(endpoint, 'charge.succeeded');
      expect([late.status, late.body.error]).toEqual([410, 'Webhook has been revoked']);
      // Revoking again changes nothing and asks Stripe nothing.
      expect((await http.delete(`${path()}/${subscription.id}`, { bearer: project.ownerJwt })).status).toBe(204);
      expect(stripeCalls('DELETE').length).toBe(deletesBefore + 1);
    });

    it('counts an endpoint Stripe says is gone (404 resource_missing) as removed', async () => {
      const { subscription } = await stripeSubscription('charge.succeeded');
      stripe.forget(subscription.providerId!);
      const revoked = await http.delete(`${path()}/${subscription.id}`, { bearer: project.ownerJwt });
      expect(revoked.status).toBe(204);
      expect((await listed()).find((entry) => entry.id === subscription.id)?.status).toBe('REVOKED');
    });

    it('revokes a FAILED subscription without asking Stripe, and answers 404 for one the project does not have', async () => {
      const failed = await subscribe({ provider: 'stripe', events: 'charge.succeeded', credentials: { secretKey: newKey() } });
      expect(failed.body.status).toBe('FAILED');
      const deletesBefore = stripeCalls('DELETE').length;
      expect((await http.delete(`${path()}/${failed.body.id}`, { bearer: project.ownerJwt })).status).toBe(204);
      expect(stripeCalls('DELETE').length).toBe(deletesBefore);
      for (const id of [randomUUID(), 'not-a-uuid']) {
        const missing = await http.delete(`${path()}/${id}`, { bearer: project.ownerJwt });
        expect([missing.status, missing.body.error]).toEqual([404, 'Subscription not found']);
      }
    });
  });

  describe('console access', () => {
    it('answers 401 without or with a bad console token (an API token too)', async () => {
      const id = randomUUID();
      const routes: Array<[string, string]> = [
        ['GET', path()],
        ['POST', path()],
        ['POST', `${path()}/${id}/retry`],
        ['DELETE', `${path()}/${id}`],
      ];
      const { token } = await issueToken(http, project, ['automation:trigger']);
      for (const [method, route] of routes) {
        const body = method === 'POST' ? { provider: 'stripe', events: 'charge.succeeded', credentials: { secretKey: newKey() } } : undefined;
        const none = await http.request(method, route, { body });
        expect([method, route, none.status, none.body.error]).toEqual([method, route, 401, 'Missing console token']);
        const bad = await http.request(method, route, { body, bearer: 'not-a-jwt' });
        expect([method, route, bad.status, bad.body.error]).toEqual([method, route, 401, 'Invalid or expired console token']);
        const withToken = await http.request(method, route, { body, bearer: token });
        expect([method, route, withToken.status, withToken.body.error]).toEqual([method, route, 401, 'Invalid or expired console token']);
      }
    });

    it('answers 404 outside the organization or for an unknown project; a VIEWER lists but gets 403 for the rest', async () => {
      const { subscription } = await stripeSubscription('charge.succeeded');
      const body = { provider: 'stripe', events: 'charge.succeeded', credentials: { secretKey: newKey() } };
      const stranger = consoleJwt(`stranger-${randomUUID()}`);
      for (const answer of [
        await http.get(path(), { bearer: stranger }),
        await http.post(path(), body, { bearer: stranger }),
        await http.post(`${path()}/${subscription.id}/retry`, {}, { bearer: stranger }),
        await http.delete(`${path()}/${subscription.id}`, { bearer: stranger }),
      ]) {
        expect([answer.status, answer.body.error]).toEqual([404, 'Organization not found']);
      }
      const unknownProject = `/v1/orgs/${project.orgId}/projects/${randomUUID()}/webhook-subscriptions`;
      const missing = await http.get(unknownProject, { bearer: project.ownerJwt });
      expect([missing.status, missing.body.error]).toEqual([404, 'Project not found']);

      const viewerId = `viewer-${randomUUID()}`;
      expect((await http.post(`/v1/orgs/${project.orgId}/members`, { userId: viewerId, role: 'VIEWER' }, { bearer: project.ownerJwt })).status).toBe(201);
      const viewer = consoleJwt(viewerId);
      const list = await http.get<{ data: Subscription[] }>(path(), { bearer: viewer });
      expect(list.status).toBe(200);
      expect(list.body.data.map((entry) => entry.id)).toContain(subscription.id);
      for (const answer of [
        await http.post(path(), body, { bearer: viewer }),
        await http.post(`${path()}/${subscription.id}/retry`, {}, { bearer: viewer }),
        await http.delete(`${path()}/${subscription.id}`, { bearer: viewer }),
      ]) {
        expect([answer.status, answer.body.error]).toEqual([403, 'This action requires edit access to the project']);
      }
      expect(stripe.endpoints.has(subscription.providerId!)).toBe(true);
    });
  });

  // Last: it looks at every answer and log line the tests above produced.
  describe('secrets', () => {
    it('lists subscriptions without credentials, and no secret key or signing secret is in any answer or log', async () => {
      const data = await listed();
      expect(data.length).toBeGreaterThan(5);
      for (const entry of data) expect(Object.keys(entry).sort()).toEqual(['createdAt', 'endpoint', 'events', 'failureReason', 'id', 'provider', 'providerId', 'status']);
      const answerText = JSON.stringify(answers);
      const logOutput = `${logText}\n${webhook.output()}`;
      expect(logOutput.length).toBeGreaterThan(1000);
      expect(secrets.length).toBeGreaterThan(8);
      const stored = JSON.stringify(await sql('SELECT * FROM webhook.webhook_subscriptions'));
      expectSecretsKeptOut(secrets, { answers: answerText, logs: logOutput, stored });
    });
  });
});
