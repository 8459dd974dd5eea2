import { gatewayService } from '@runline/gateway-service';
import { invocationService } from '@runline/invocation-service';
import { HttpClient, queryDatabase, startTestSystem, type TestSystem } from '@runline/testing';
import { createPublishedProject, issueToken, type ProjectFixture } from './gateway-fixtures.js';
import { gate, startLocalServer, type LocalServer } from './support/lifecycle-support.js';
import { automationDefinition, chatbotDefinition, failingSetFlow, runPath, type Json, type RunEndpoint } from './support/runs-support.js';

/** Async runs time out after this long here, so a held run ends TIMEOUT within a test. */
const ASYNC_RUN_TIMEOUT_MS = 1500;

/**
 * `Prefer: wait=N` on the async run endpoints (DESIGN section 14, RFC 7240): a run that ends
 * within N seconds is answered 200 with the sync endpoint's body and `Preference-Applied`;
 * otherwise the usual 202. The run stays async (its callback is sent).
 */
describe('Prefer: wait on the async run endpoints', () => {
  let system: TestSystem;
  let http: HttpClient;
  let endpoint: LocalServer;
  let held = gate();
  let chatbot: ProjectFixture;
  let chatbotToken: string;
  let failing: ProjectFixture;
  let failingToken: string;
  let slow: ProjectFixture;
  let slowToken: string;

  const sql = (query: string, parameters: unknown[]) => queryDatabase(system.database.url, query, parameters);

  beforeAll(async () => {
    system = await startTestSystem([gatewayService, invocationService], {
      environment: { OUTBOUND_ALLOWED_CIDRS: '127.0.0.0/8', ASYNC_RUN_TIMEOUT_MS: String(ASYNC_RUN_TIMEOUT_MS) },
    });
    http = new HttpClient(system.url('gateway'));
    endpoint = await startLocalServer(async () => {
      await held.opened;
      return { status: 200, body: { ok: true } };
    });
    chatbot = await createPublishedProject(http, 'CHATBOT');
    chatbotToken = (await issueToken(http, chatbot, ['flow:trigger', 'bot:invoke'])).token;
    failing = await createPublishedProject(http, 'CHATBOT', chatbotDefinition(failingSetFlow()));
    failingToken = (await issueToken(http, failing, ['flow:trigger'])).token;
    slow = await createPublishedProject(
      http,
      'AUTOMATION',
      automationDefinition({
        trigger: { externalEnabled: true, key: 'external_event', expectedPayload: { orderId: '' } },
        start: 'call',
        nodes: {
          call: { type: 'http', method: 'POST', url: `${endpoint.url}/orders`, saveAs: 'reply', next: 'done' },
          done: { type: 'return', value: "{ 'ok': true }" },
        },
      }),
    );
    slowToken = (await issueToken(http, slow, ['automation:trigger'])).token;
  }, 60_000);

  afterAll(async () => {
    held.open();
    await system?.stop();
    await endpoint?.close();
  });

  let customers = 0;
  /** A flow trigger body with a customer of its own: the ONE_TIME policy runs a customer once. */
  const flowBodyOf = () => ({ event: 'order.created', customerId: `c-${++customers}`, orderId: '42' });
  const post = (endpointName: RunEndpoint, project: ProjectFixture, token: string, body: Json, prefer?: string) =>
    http.post<Json>(runPath(endpointName, project), body, { bearer: token, headers: prefer === undefined ? {} : { prefer } });

  it('a fast run: 200 with the sync endpoint’s body and Preference-Applied: wait=N', async () => {
    const waited = await post('flowTriggerAsync', chatbot, chatbotToken, flowBodyOf(), 'wait=10');
    expect(waited.status).toBe(200);
    expect(waited.headers.get('preference-applied')).toBe('wait=10');
    const sync = await post('flowTrigger', chatbot, chatbotToken, flowBodyOf());
    expect(sync.status).toBe(200);
    expect(Object.keys(waited.body)).toEqual(Object.keys(sync.body));
    expect(waited.body).toEqual({ ...sync.body, invocationId: waited.body.invocationId });
    expect(waited.body).toMatchObject({ status: 'SUCCEEDED', result: { messages: ['Order 42'] } });
    // The run is still an async run.
    const read = await http.get<Json>(`/v1/orgs/${chatbot.orgId}/external-invocations/${waited.body.invocationId as string}`, { bearer: chatbotToken });
    expect(read.body).toMatchObject({ status: 'SUCCEEDED', mode: 'ASYNC' });
  });

  it('a bot message (bots/{id}/invoke) answered in time keeps its session', async () => {
    const waited = await post('botInvoke', chatbot, chatbotToken, { message: 'hi', userName: 'Ada', sessionId: 's-1' }, 'respond-async, wait=10');
    expect(waited.status).toBe(200);
    expect(waited.headers.get('preference-applied')).toBe('wait=10');
    expect(waited.body).toMatchObject({ status: 'SUCCEEDED', sessionId: 's-1', result: { messages: ['Hi Ada'] } });
  });

  it('a FAILED run: 200 with {error, invocationId, status}', async () => {
    const waited = await post('flowTriggerAsync', failing, failingToken, flowBodyOf(), 'wait=10');
    expect(waited.status).toBe(200);
    expect(waited.headers.get('preference-applied')).toBe('wait=10');
    expect(Object.keys(waited.body)).toEqual(['error', 'invocationId', 'status']);
    expect(waited.body).toMatchObject({ status: 'FAILED', error: expect.any(String) });
  });

  it('a TIMEOUT run: 200 with {error, invocationId, status}', async () => {
    held = gate();
    const waited = await post('automationTriggerAsync', slow, slowToken, { payload: { orderId: '1' } }, 'wait=10');
    held.open();
    expect(waited.status).toBe(200);
    expect(waited.headers.get('preference-applied')).toBe('wait=10');
    expect(Object.keys(waited.body)).toEqual(['error', 'invocationId', 'status']);
    expect(waited.body.status).toBe('TIMEOUT');
  });

  it('a run that does not end within N seconds: the usual 202, after N seconds, without Preference-Applied', async () => {
    held = gate();
    const sentAt = Date.now();
    const waited = await post('automationTriggerAsync', slow, slowToken, { payload: { orderId: '2' } }, 'wait=1');
    const tookMs = Date.now() - sentAt;
    held.open();
    expect(waited.status).toBe(202);
    expect(waited.headers.get('preference-applied')).toBeNull();
    expect(waited.body).toEqual({ invocationId: expect.any(String), status: 'QUEUED', scheduledFor: null });
    expect(tookMs).toBeGreaterThanOrEqual(950);
    expect(tookMs).toBeLessThan(ASYNC_RUN_TIMEOUT_MS);
  });

  it.each(['wait=0', 'wait=61', 'wait=abc', 'wait=1.5', 'respond-async'])('%s is ignored (RFC 7240): 202 at once, no Preference-Applied', async (prefer) => {
    const answer = await post('flowTriggerAsync', chatbot, chatbotToken, flowBodyOf(), prefer);
    expect(answer.status).toBe(202);
    expect(answer.headers.get('preference-applied')).toBeNull();
    expect(answer.body).toMatchObject({ status: 'QUEUED', scheduledFor: null });
  });

  it('a scheduled run (delaySeconds) is answered 202 SCHEDULED at once', async () => {
    const answer = await post('flowTriggerAsync', chatbot, chatbotToken, { ...flowBodyOf(), delaySeconds: 30 }, 'wait=5');
    expect(answer.status).toBe(202);
    expect(answer.headers.get('preference-applied')).toBeNull();
    expect(answer.body.status).toBe('SCHEDULED');
  });

  it('the run stays async: its callback is sent (the DeliverCallback command is written with its end)', async () => {
    const waited = await post('flowTriggerAsync', chatbot, chatbotToken, { ...flowBodyOf(), webhookUrl: 'https://127.0.0.1:9/hook' }, 'wait=10');
    expect(waited.status).toBe(200);
    const [row] = await sql(
      `SELECT count(*)::int AS commands FROM invocation.outbox WHERE subject = 'callback.cmd.deliver-callback' AND position(convert_to($1, 'UTF8') IN data) > 0`,
      [waited.body.invocationId],
    );
    expect(row?.commands).toBe(1);
  });

  it('the sync endpoints do not take the preference', async () => {
    const sync = await post('flowTrigger', chatbot, chatbotToken, flowBodyOf(), 'wait=5');
    expect(sync.status).toBe(200);
    expect(sync.headers.get('preference-applied')).toBeNull();
  });
});
