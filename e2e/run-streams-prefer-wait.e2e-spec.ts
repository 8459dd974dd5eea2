import { fromBinary, GetInvocationRequestSchema, INVOCATION_QUERY_SUBJECTS } from '@runline/contracts';
import { gatewayService } from '@runline/gateway-service';
import { invocationService } from '@runline/invocation-service';
import { HttpClient, queryDatabase, startTestSystem, type TestSystem } from '@runline/testing';
import { createPublishedProject, issueToken, type ProjectFixture } from './gateway-fixtures.js';
import { gate, startLocalServer, type LocalServer } from './support/lifecycle-support.js';
import { automationDefinition, chatbotDefinition, failingSetFlow, invocationPath, runPath, type Json, type RunEndpoint } from './support/runs-support.js';

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
  let inline: ProjectFixture;
  let inlineToken: string;
  /** Reads of each run from the invocation service (GET's request/reply), as the bus carries them. */
  const reads = new Map<string, number>();

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
    // Self-contained: executed as the request waits, recorded once ended. Its result's keys are
    // not in the read model's order (jsonb: shorter keys first), so an answer in another order shows.
    inline = await createPublishedProject(
      http,
      'AUTOMATION',
      automationDefinition({
        trigger: { externalEnabled: true, key: 'external_event' },
        start: 'done',
        nodes: { done: { type: 'return', value: "{ 'orderId': payload.orderId, 'ok': true, 'detail': { 'alpha': 2, 'zz': 1 } }" } },
      }),
    );
    inlineToken = (await issueToken(http, inline, ['automation:trigger'])).token;
    // A copy of every read request: a plain subscriber beside the invocation service's queue group.
    await system.bus.listen(INVOCATION_QUERY_SUBJECTS.GET_INVOCATION, ({ data }) => {
      const { invocationId } = fromBinary(GetInvocationRequestSchema, data);
      reads.set(invocationId, (reads.get(invocationId) ?? 0) + 1);
    });
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
    // A queued run (bots never run inline), its end heard on the bus: the body still reads as GET's.
    const read = await http.get<Json>(invocationPath(chatbot.orgId, waited.body.invocationId as string), { bearer: chatbotToken });
    const { invocationId, status, result } = read.body;
    expect(JSON.stringify(waited.body)).toBe(JSON.stringify({ invocationId, status, result, sessionId: 's-1' }));
  });

  /** Whether the run was executed as its request waited: recorded ended, with no RunInvocation command ever queued for it. */
  const ranInline = async (invocationId: string) => {
    const [row] = await sql(
      `SELECT count(*)::int AS commands FROM invocation.outbox WHERE subject = 'invocation.cmd.run-invocation' AND position(convert_to($1, 'UTF8') IN data) > 0`,
      [invocationId],
    );
    return row?.commands === 0;
  };

  /**
   * Prefer: wait on a run executed inline: answered from the StartInvocation reply, so the run is
   * never read for it; the one read (the GET after, which the listener must see) is the
   * baseline the body must equal, byte for byte, in the fields it holds.
   */
  async function answeredWithoutRead(endpointName: RunEndpoint, project: ProjectFixture, token: string, body: Json) {
    const waited = await post(endpointName, project, token, body, 'wait=10');
    expect(waited.status).toBe(200);
    expect(waited.headers.get('preference-applied')).toBe('wait=10');
    const invocationId = waited.body.invocationId as string;
    expect(await ranInline(invocationId)).toBe(true);
    expect(reads.get(invocationId) ?? 0).toBe(0);
    const read = await http.get<Json>(invocationPath(project.orgId, invocationId), { bearer: token });
    expect(read.status).toBe(200);
    expect(reads.get(invocationId)).toBe(1);
    return { raw: JSON.stringify(waited.body), run: read.body };
  }

  it('an inline automation run: answered from its start’s reply with no read of the run, the body GET’s byte for byte', async () => {
    const { raw, run } = await answeredWithoutRead('automationTriggerAsync', inline, inlineToken, { payload: { orderId: '7' }, enrollmentPolicy: 'EVERY_MATCH' });
    expect(run).toMatchObject({ status: 'SUCCEEDED', mode: 'ASYNC', result: { orderId: '7', ok: true, detail: { alpha: 2, zz: 1 } } });
    expect(raw).toBe(JSON.stringify({ invocationId: run.invocationId, status: run.status, result: run.result }));
  });

  it('an inline flow run: the same, its result {messages, actions} as GET orders it', async () => {
    // EVERY_MATCH: a ONE_TIME run (the project's policy) is never executed inline.
    const { raw, run } = await answeredWithoutRead('flowTriggerAsync', chatbot, chatbotToken, { ...flowBodyOf(), enrollmentPolicy: 'EVERY_MATCH' });
    expect(run).toMatchObject({ status: 'SUCCEEDED', mode: 'ASYNC', result: { messages: ['Order 42'] } });
    expect(raw).toBe(JSON.stringify({ invocationId: run.invocationId, status: run.status, result: run.result }));
  });

  it('an inline FAILED run: {error, invocationId, status} from its start’s reply, with no read of the run', async () => {
    const { raw, run } = await answeredWithoutRead('flowTriggerAsync', failing, failingToken, { ...flowBodyOf(), enrollmentPolicy: 'EVERY_MATCH' });
    expect(run.status).toBe('FAILED');
    expect(raw).toBe(JSON.stringify({ error: run.errorMessage, invocationId: run.invocationId, status: run.status }));
  });

  it('without the preference an inline run is answered as the spec says: 202 QUEUED, nothing of its end', async () => {
    const answer = await post('automationTriggerAsync', inline, inlineToken, { payload: { orderId: '8' }, enrollmentPolicy: 'EVERY_MATCH' });
    expect(answer.status).toBe(202);
    expect(answer.headers.get('preference-applied')).toBeNull();
    expect(JSON.stringify(answer.body)).toBe(JSON.stringify({ invocationId: answer.body.invocationId, status: 'QUEUED', scheduledFor: null }));
    expect(await ranInline(answer.body.invocationId as string)).toBe(true);
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
