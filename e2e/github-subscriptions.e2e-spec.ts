import { randomUUID } from 'node:crypto';
import { PassThrough } from 'node:stream';
import { deadLetterService } from '@runline/dead-letter-service';
import { gatewayService } from '@runline/gateway-service';
import { invocationService } from '@runline/invocation-service';
import { HttpClient, queryDatabase, startTestSystem, type TestSystem } from '@runline/testing';
import { createPublishedProject, type ProjectFixture } from './gateway-fixtures.js';
import { selfSignedCertificate, type TestCertificate } from './support/https-receiver.js';
import { eventually } from './support/lifecycle-support.js';
import type { RunningProcess } from './support/processes.js';
import { githubToken, startGithubFake, type FakeDelivery, type GithubFake } from './support/providers/github-fake.js';
import { expectSecretsKeptOut, type Subscription } from './support/subscriptions-support.js';
import { startWebhookProcess } from './support/webhook-process.js';


/** An automation whose trigger expects what every push carries: its ref. A ping has none. */
const GITHUB_AUTOMATION = {
  schemaVersion: 1,
  workflow: {
    trigger: { externalEnabled: true, key: 'github_push', expectedPayload: { ref: '' } },
    start: 'n1',
    nodes: { n1: { type: 'return', value: "{ 'ok': true, 'ref': payload.ref }" } },
  },
};

const REPO = 'octo-org/hello-world';
const answerOf = (delivery: FakeDelivery) => JSON.parse(delivery.responseBody) as Record<string, unknown>;

/**
 * Managed GitHub subscriptions end to end (DESIGN section 9): console routes over HTTP, the
 * webhook service (its own process, trusting the fake's certificate) creating and removing
 * repository hooks at a local GitHub over HTTPS through the outbound guard, and GitHub's signed
 * deliveries (the ping included) to the endpoint.
 */
describe('GitHub subscriptions', () => {
  let certificate: TestCertificate;
  let github: GithubFake;
  let system: TestSystem;
  let webhook: RunningProcess;
  let http: HttpClient;
  let project: ProjectFixture;
  let token: string;
  const logs = new PassThrough();
  let logText = '';
  logs.on('data', (chunk: Buffer) => (logText += chunk.toString()));
  const sql = <T>(query: string, parameters: unknown[] = []) => queryDatabase(system.database.url, query, parameters) as Promise<T[]>;
  /** Every token and hook secret the tests used: none may show in an answer or a log. */
  const secrets: string[] = [];
  const answers: unknown[] = [];

  const path = () => `/v1/orgs/${project.orgId}/projects/${project.projectId}/webhook-subscriptions`;
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
  const hookOf = (subscription: Subscription) => github.hook(Number(subscription.providerId))!;
  /** An ACTIVE subscription whose hook secret GitHub got from us (generated). */
  const githubSubscription = async (events = 'push, issues') => {
    const created = await subscribe({ provider: 'github', events, credentials: { token, repository: REPO } });
    expect([created.status, created.body.status]).toEqual([201, 'ACTIVE']);
    secrets.push(hookOf(created.body).config.secret!);
    return created.body;
  };
  const runsOf = async () =>
    (await sql<{ n: number }>(`SELECT count(*)::int AS n FROM invocation.invocation_views WHERE project_id = $1`, [project.projectId]))[0]!.n;
  const githubCalls = (method: string) => github.requests.filter((request) => request.method === method);

  beforeAll(async () => {
    certificate = await selfSignedCertificate();
    // GitHub queues the ping: it reaches the hook after the create call was answered.
    github = await startGithubFake({ key: certificate.key, cert: certificate.cert, pingDelayMs: 1000 });
    system = await startTestSystem([gatewayService, invocationService, deadLetterService], {
      logDestination: logs,
      logLevel: 'debug',
      environment: { OUTBOUND_ALLOWED_CIDRS: '127.0.0.0/8', WEBHOOK_PROVIDER_BUDGET_MS: '20000' },
    });
    webhook = await startWebhookProcess(system, certificate.caFile, { GITHUB_API_URL: github.url, WEBHOOK_PROVIDER_BACKOFF_MS: '200' });
    http = new HttpClient(system.url('gateway'));
    project = await createPublishedProject(http, 'AUTOMATION', GITHUB_AUTOMATION);
    token = githubToken();
    secrets.push(token);
    github.grant(token, REPO);
  }, 90_000);

  afterAll(async () => {
    await webhook?.stop();
    await system?.stop();
    await github?.close();
    await certificate?.remove();
  });

  describe('creating', () => {
    it('creates the hook at GitHub: 201 ACTIVE with endpoint and providerId; GitHub got the documented hook; its ping starts no run', async () => {
      const hookSecret = `own-hook-secret-${randomUUID()}`;
      secrets.push(hookSecret);
      const runsBefore = await runsOf();
      const postsBefore = githubCalls('POST').length;
      const created = await subscribe({ provider: 'github', events: 'push, pull_request', credentials: { token, repository: REPO, webhookSecret: hookSecret } });
      expect(created.status).toBe(201);
      const hook = hookOf(created.body);
      expect(created.body).toEqual({
        id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        provider: 'github',
        events: ['push', 'pull_request'],
        status: 'ACTIVE',
        endpoint: `${system.url('gateway')}/v1/hooks/${created.body.id}`,
        providerId: String(hook.id),
        failureReason: null,
        createdAt: expect.any(String),
      });

      const calls = githubCalls('POST').slice(postsBefore);
      expect(calls.map((call) => [call.path, call.status])).toEqual([[`/repos/${REPO}/hooks`, 201]]);
      expect(calls[0]!.body).toEqual({
        name: 'web',
        active: true,
        events: ['push', 'pull_request'],
        config: { url: created.body.endpoint, content_type: 'json', secret: hookSecret, insecure_ssl: '0' },
      });
      expect(calls[0]!.headers).toMatchObject({ authorization: `Bearer ${token}`, accept: 'application/vnd.github+json', 'x-github-api-version': '2022-11-28' });
      expect(calls[0]!.headers['user-agent']).toEqual(expect.any(String));

      // GitHub's ping: signed with the hook secret, answered 200 as housekeeping, and nothing runs.
      const ping = await github.pinged(hook.id);
      expect([ping.event, ping.status, answerOf(ping)]).toEqual(['ping', 200, { ignored: true, reason: 'Event not subscribed' }]);
      expect(await runsOf()).toBe(runsBefore);

      // A push to it runs, signed with the secret the user chose.
      const push = await github.deliver(hook.id, 'push', { ref: 'refs/heads/main', after: '6113728f27ae82c7b1a177c8d03f9e96e0adf246' });
      expect(push.status).toBe(202);
    });

    it('answers 400 for GitHub credentials or events that are not ones, and asks GitHub nothing', async () => {
      const before = github.requests.length;
      const credentials = { token, repository: REPO };
      const cases: Array<[Record<string, unknown>, string]> = [
        [{ provider: 'github', events: 'push,pushh', credentials }, '"pushh" is not a GitHub repository webhook event'],
        [{ provider: 'github', events: 'ping', credentials }, '"ping" is not a GitHub repository webhook event'],
        [{ provider: 'github', events: 'push', credentials: {} }, 'credentials.token must be a GitHub token'],
        [{ provider: 'github', events: 'push', credentials: { token, repository: 'hello-world' } }, 'credentials.repository must be "owner/repo"'],
        [{ provider: 'github', events: 'push', credentials: { token, repository: 'octo-org/../x' } }, 'credentials.repository must be "owner/repo"'],
        [{ provider: 'github', events: 'push', credentials: { ...credentials, webhookSecret: 'short' } }, 'credentials.webhookSecret must be 16 to 256 characters'],
        [{ provider: 'github', events: 'push', credentials: { ...credentials, secretKey: 'sk_test_x' } }, 'credentials.secretKey is not a GitHub credential'],
      ];
      for (const [body, error] of cases) {
        const answer = await subscribe(body);
        expect({ body, status: answer.status, error: answer.body.error }).toEqual({ body, status: 400, error });
      }
      expect(github.requests.length).toBe(before);
    });

    it('saves GitHub’s refusal as FAILED with GitHub’s own message (still 201); retry makes it ACTIVE', async () => {
      const stranger = githubToken();
      secrets.push(stranger);
      const failed = await subscribe({ provider: 'github', events: 'push', credentials: { token: stranger, repository: REPO } });
      expect(failed.status).toBe(201);
      expect(failed.body).toMatchObject({ status: 'FAILED', providerId: null, failureReason: 'Bad credentials' });

      const notMine = await subscribe({ provider: 'github', events: 'push', credentials: { token, repository: 'octo-org/not-mine' } });
      expect(notMine.body).toMatchObject({ status: 'FAILED', providerId: null, failureReason: 'Not Found' });

      const reader = githubToken();
      secrets.push(reader);
      github.grant(reader, REPO, 'read');
      const readOnly = await subscribe({ provider: 'github', events: 'push', credentials: { token: reader, repository: REPO } });
      expect(readOnly.body).toMatchObject({ status: 'FAILED', failureReason: 'Resource not accessible by personal access token' });

      github.grant(stranger, REPO);
      const retried = await http.post<Subscription>(`${path()}/${failed.body.id}/retry`, {}, { bearer: project.ownerJwt });
      answers.push(retried.body);
      expect(retried.status).toBe(200);
      expect(retried.body).toEqual({ ...failed.body, status: 'ACTIVE', providerId: expect.stringMatching(/^\d+$/), failureReason: null });
      secrets.push(hookOf(retried.body).config.secret!);
    });

    it('waits out a GitHub rate limit for as long as GitHub asks, and retries 5xx with backoff', async () => {
      let before = githubCalls('POST').length;
      github.rateLimitNext('secondary', 1, 1);
      const limited = await subscribe({ provider: 'github', events: 'issues', credentials: { token, repository: REPO } });
      expect([limited.status, limited.body.status]).toEqual([201, 'ACTIVE']);
      let calls = githubCalls('POST').slice(before);
      expect(calls.map((call) => call.status)).toEqual([403, 201]);
      expect(calls[1]!.at - calls[0]!.at).toBeGreaterThanOrEqual(950);
      secrets.push(hookOf(limited.body).config.secret!);

      before = githubCalls('POST').length;
      github.failNext(502, 3);
      const down = await subscribe({ provider: 'github', events: 'issues', credentials: { token, repository: REPO } });
      expect(down.body).toMatchObject({ status: 'FAILED', failureReason: 'Server Error', providerId: null });
      calls = githubCalls('POST').slice(before);
      expect(calls.map((call) => call.status)).toEqual([502, 502, 502]);
    });
  });

  describe('deliveries', () => {
    let subscription: Subscription;
    beforeAll(async () => {
      subscription = await githubSubscription('push, issues');
      await github.pinged(Number(subscription.providerId));
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

    it('starts an async WEBHOOK run with the event as payload from a push GitHub signed (generated secret): 202', async () => {
      expect(hookOf(subscription).config.secret).toMatch(/^[0-9a-f]{64}$/);
      const push = await github.deliver(Number(subscription.providerId), 'push', { ref: 'refs/heads/main', repository: { full_name: REPO } });
      expect(push.status).toBe(202);
      const answer = answerOf(push);
      expect(answer).toEqual({ invocationId: expect.stringMatching(/^[0-9a-f-]{36}$/), status: expect.any(String) });
      const row = await eventually('the run to succeed', async () => {
        const found = await run(answer.invocationId as string);
        return found?.status === 'SUCCEEDED' ? found : undefined;
      });
      expect(row).toEqual({ status: 'SUCCEEDED', source: 'WEBHOOK', mode: 'ASYNC', payload: { payload: JSON.parse(push.body) }, result: { ok: true, ref: 'refs/heads/main' } });
    });

    it('answers 401 Invalid signature for another secret, a SHA-1-only or an empty signature, and runs nothing', async () => {
      const before = await runsOf();
      const hookId = Number(subscription.providerId);
      const wrong = await github.deliver(hookId, 'push', { ref: 'refs/heads/main' }, { signWith: 'not-the-hook-secret-at-all' });
      expect([wrong.status, answerOf(wrong).error]).toEqual([401, 'Invalid signature']);
      const empty = await github.deliver(hookId, 'push', { ref: 'refs/heads/main' }, { signature: '' });
      expect([empty.status, answerOf(empty).error]).toEqual([401, 'Invalid signature']);
      const sha1 = await github.deliver(hookId, 'push', { ref: 'refs/heads/main' }, { signature: `sha1=${'0'.repeat(40)}` });
      expect([sha1.status, answerOf(sha1).error]).toEqual([401, 'Invalid signature']);
      expect(await runsOf()).toBe(before);
    });

    it('answers 409 with the first run for a repeated X-GitHub-Delivery (GitHub’s redelivery), and runs nothing again', async () => {
      const hookId = Number(subscription.providerId);
      const first = await github.deliver(hookId, 'issues', { action: 'opened', ref: 'refs/heads/main' });
      expect(first.status).toBe(202);
      const before = await runsOf();
      const repeat = await github.deliver(hookId, 'issues', { action: 'opened', ref: 'refs/heads/main' }, { deliveryId: first.deliveryId });
      expect(repeat.status).toBe(409);
      expect(answerOf(repeat)).toEqual({ error: 'Delivery already received', invocationId: answerOf(first).invocationId });
      expect(await runsOf()).toBe(before);
    });

    it('answers 200 and runs nothing for an event the subscription does not name, and for a redelivered ping', async () => {
      const before = await runsOf();
      const hookId = Number(subscription.providerId);
      const release = await github.deliver(hookId, 'release', { action: 'published', ref: 'refs/heads/main' }, { evenIfUnsubscribed: true });
      expect([release.status, answerOf(release)]).toEqual([200, { ignored: true, reason: 'Event not subscribed' }]);
      const ping = await github.deliver(hookId, 'ping', { zen: 'Practicality beats purity.', hook_id: hookId });
      expect([ping.status, answerOf(ping)]).toEqual([200, { ignored: true, reason: 'Event not subscribed' }]);
      expect(await runsOf()).toBe(before);
    });
  });

  describe('revoking', () => {
    it('removes the hook at GitHub first: a GitHub failure answers 502 and changes nothing; then 204, REVOKED, and 410 at the endpoint', async () => {
      const subscription = await githubSubscription('push');
      const hookId = Number(subscription.providerId);
      await github.pinged(hookId);

      github.failNext(500, 3);
      const failing = await http.delete(`${path()}/${subscription.id}`, { bearer: project.ownerJwt });
      expect([failing.status, failing.body.error]).toEqual([502, 'The provider did not remove the webhook: Server Error']);
      expect((await listed()).find((entry) => entry.id === subscription.id)?.status).toBe('ACTIVE');
      expect(github.hook(hookId)?.deleted).toBe(false);
      expect((await github.deliver(hookId, 'push', { ref: 'refs/heads/main' })).status).toBe(202);

      const deletesBefore = githubCalls('DELETE').length;
      const revoked = await http.delete(`${path()}/${subscription.id}`, { bearer: project.ownerJwt });
      expect(revoked.status).toBe(204);
      const deletes = githubCalls('DELETE').slice(deletesBefore);
      expect(deletes.map((call) => [call.path, call.status, call.headers.authorization])).toEqual([[`/repos/${REPO}/hooks/${hookId}`, 204, `Bearer ${token}`]]);
      expect(github.hook(hookId)?.deleted).toBe(true);
      expect((await listed()).find((entry) => entry.id === subscription.id)).toEqual({ ...subscription, status: 'REVOKED' });

      // A delivery that was already on its way when the hook went.
      const late = await github.deliver(hookId, 'push', { ref: 'refs/heads/main' }, { evenIfDeleted: true });
      expect([late.status, answerOf(late).error]).toEqual([410, 'Webhook has been revoked']);
      expect((await http.delete(`${path()}/${subscription.id}`, { bearer: project.ownerJwt })).status).toBe(204);
      expect(githubCalls('DELETE').length).toBe(deletesBefore + 1);
    });

    it('counts a hook GitHub says is gone (404) as removed', async () => {
      const subscription = await githubSubscription('push');
      github.forget(Number(subscription.providerId));
      const deletesBefore = githubCalls('DELETE').length;
      const revoked = await http.delete(`${path()}/${subscription.id}`, { bearer: project.ownerJwt });
      expect(revoked.status).toBe(204);
      expect(githubCalls('DELETE').slice(deletesBefore).map((call) => call.status)).toEqual([404]);
      expect((await listed()).find((entry) => entry.id === subscription.id)?.status).toBe('REVOKED');
    });

    it('runs nothing for the deletion notice (meta) GitHub sends a hook subscribed to *', async () => {
      const subscription = await githubSubscription('*');
      const hookId = Number(subscription.providerId);
      await github.pinged(hookId);
      const before = await runsOf();
      expect((await http.delete(`${path()}/${subscription.id}`, { bearer: project.ownerJwt })).status).toBe(204);
      const notice = await eventually('the meta notice to be answered', async () => github.deliveries.find((delivery) => delivery.hookId === hookId && delivery.event === 'meta'));
      // Ignored if it arrived before the subscription was marked REVOKED, refused after.
      expect([200, 410]).toContain(notice.status);
      expect(await runsOf()).toBe(before);
    });
  });

  // Last: it looks at every answer and log line the tests above produced.
  describe('secrets', () => {
    it('lists subscriptions without credentials, and no token or hook secret is in any answer or log, or stored in clear', async () => {
      const data = await listed();
      expect(data.length).toBeGreaterThan(5);
      for (const entry of data) expect(Object.keys(entry).sort()).toEqual(['createdAt', 'endpoint', 'events', 'failureReason', 'id', 'provider', 'providerId', 'status']);
      const answerText = JSON.stringify(answers);
      const logOutput = `${logText}\n${webhook.output()}`;
      expect(logOutput.length).toBeGreaterThan(1000);
      expect(secrets.length).toBeGreaterThan(6);
      const stored = JSON.stringify(await sql('SELECT * FROM webhook.webhook_subscriptions'));
      expectSecretsKeptOut(secrets, { answers: answerText, logs: logOutput, stored });
    });
  });
});
