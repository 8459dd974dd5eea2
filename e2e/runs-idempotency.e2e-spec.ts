import { gatewayService } from '@runline/gateway-service';
import { invocationService } from '@runline/invocation-service';
import { HttpClient, queryDatabase, startTestSystem, type HttpResult, type TestSystem } from '@runline/testing';
import { createPublishedProject, issueToken, type ProjectFixture } from './gateway-fixtures.js';
import { startLocalServer, waitForFinalInvocation, type InvocationBody, type LocalServer } from './support/lifecycle-support.js';

/**
 * x-idempotency-key on the run endpoints (spec "Common trigger body fields", README "Runs"):
 * a repeat returns the original run, 200 with the stored result once it finished, 202 while it
 * is in progress; the key is scoped to project + target + mode; keys over 128 characters are
 * ignored; concurrent repeats make exactly one run.
 */
describe('runs: idempotency keys', () => {
  let system: TestSystem;
  let http: HttpClient;
  let slow: LocalServer;
  const SLOW_MS = 1500;
  const body = { event: 'order.created', customerId: 'c-1', orderId: '42' };
  const flowResult = { messages: ['Order 42'], actions: [] };

  const flowTrigger = (project: ProjectFixture) => `/v1/orgs/${project.orgId}/flows/${project.projectId}/trigger`;
  const flowTriggerAsync = (project: ProjectFixture) => `/v1/orgs/${project.orgId}/flows/${project.projectId}/trigger-async`;
  const keyed = (token: string, key: string) => ({ bearer: token, headers: { 'x-idempotency-key': key } });
  const runsOf = async (project: ProjectFixture): Promise<number> => {
    const [row] = await queryDatabase(system.database.url, 'SELECT count(*)::int AS n FROM invocation.invocations WHERE project_id = $1', [project.projectId]);
    return Number(row?.n);
  };

  /** A chatbot whose flow calls the slow local endpoint, then says what it got. */
  const slowFlowDefinition = () => ({
    schemaVersion: 1,
    bot: { start: 'hello', nodes: { hello: { type: 'message', text: 'Hi', next: 'end' }, end: { type: 'end' } } },
    flow: {
      trigger: { externalEnabled: true, key: 'external_event' },
      start: 'call',
      nodes: {
        call: { type: 'http', method: 'GET', url: `${slow.url}/slow`, saveAs: 'reply', next: 'say' },
        say: { type: 'message', text: 'Answered {{ vars.reply.status }}', next: 'done' },
        done: { type: 'end' },
      },
    },
  });

  async function chatbotWithToken(definition?: object): Promise<{ project: ProjectFixture; token: string }> {
    const project = await createPublishedProject(http, 'CHATBOT', definition);
    const token = (await issueToken(http, project, ['flow:trigger'])).token;
    return { project, token };
  }

  beforeAll(async () => {
    slow = await startLocalServer(() => ({ status: 200, body: { ok: true }, delayMs: SLOW_MS }));
    system = await startTestSystem([gatewayService, invocationService], { environment: { OUTBOUND_ALLOWED_CIDRS: '127.0.0.0/8' } });
    http = new HttpClient(system.url('gateway'));
  });
  afterAll(async () => {
    await system?.stop();
    await slow?.close();
  });

  it('a repeated key on a sync flow trigger answers 200 with the same run and its stored result, marked idempotentReplay', async () => {
    const { project, token } = await chatbotWithToken();
    const first = await http.post<InvocationBody>(flowTrigger(project), body, keyed(token, 'order-42'));
    expect(first.status).toBe(200);
    expect(first.body).toEqual({ invocationId: expect.any(String), status: 'SUCCEEDED', result: flowResult });

    const second = await http.post<InvocationBody>(flowTrigger(project), body, keyed(token, 'order-42'));
    expect(second.status).toBe(200);
    expect(second.body).toEqual({ invocationId: first.body.invocationId, status: 'SUCCEEDED', result: flowResult, idempotentReplay: true });
    expect(await runsOf(project)).toBe(1);
  });

  it('a repeat while the sync run is still running answers 202 RUNNING with the same id; the original caller still gets 200', async () => {
    const { project, token } = await chatbotWithToken(slowFlowDefinition());
    const callsBefore = slow.calls.length;
    const requestA = http.post<InvocationBody>(flowTrigger(project), body, keyed(token, 'sync-in-progress'));
    // B goes out once A's run is at the slow endpoint, so A is surely RUNNING.
    await waitUntil(() => slow.calls.length > callsBefore);
    const answerB = await http.post<InvocationBody>(flowTrigger(project), body, keyed(token, 'sync-in-progress'));
    const answerA = await requestA;

    expect(answerA.status).toBe(200);
    expect(answerA.body).toEqual({ invocationId: expect.any(String), status: 'SUCCEEDED', result: { messages: ['Answered 200'], actions: [] } });
    expect(answerB.status).toBe(202);
    expect(answerB.body).toEqual({ invocationId: answerA.body.invocationId, status: 'RUNNING', idempotentReplay: true });
    expect(slow.calls.length).toBe(callsBefore + 1);
    expect(await runsOf(project)).toBe(1);
  });

  it('a repeat of an async trigger answers 202 idempotentReplay while QUEUED/RUNNING and 200 with the result once finished', async () => {
    const { project, token } = await chatbotWithToken(slowFlowDefinition());
    const accepted = await http.post<InvocationBody>(flowTriggerAsync(project), body, keyed(token, 'async-1'));
    expect(accepted.status).toBe(202);
    expect(accepted.body).toEqual({ invocationId: expect.any(String), status: 'QUEUED', scheduledFor: null });
    const id = accepted.body.invocationId;

    const inProgress = await http.post<InvocationBody>(flowTriggerAsync(project), body, keyed(token, 'async-1'));
    expect(inProgress.status).toBe(202);
    expect(inProgress.body).toEqual({ invocationId: id, status: expect.stringMatching(/^(QUEUED|RUNNING)$/), idempotentReplay: true });

    const finished = await waitForFinalInvocation(http, project.orgId, id, token);
    expect(finished.status).toBe('SUCCEEDED');
    const afterwards = await http.post<InvocationBody>(flowTriggerAsync(project), body, keyed(token, 'async-1'));
    expect(afterwards.status).toBe(200);
    expect(afterwards.body).toEqual({
      invocationId: id,
      status: 'SUCCEEDED',
      result: { messages: ['Answered 200'], actions: [] },
      idempotentReplay: true,
    });
    expect(await runsOf(project)).toBe(1);
  });

  describe('50 concurrent requests with one key make exactly one run', () => {
    it.each([
      ['sync', flowTrigger, body],
      // A self-contained run not bound to a ONE_TIME subject is executed first and recorded once ended (README "Runs").
      ['sync (EVERY_MATCH: recorded once ended)', flowTrigger, { ...body, enrollmentPolicy: 'EVERY_MATCH' }],
      ['async', flowTriggerAsync, body],
    ] as const)('on the %s flow endpoint', async (label, endpoint, requestBody) => {
      const mode = endpoint === flowTrigger ? 'sync' : 'async';
      const { project, token } = await chatbotWithToken();
      const key = `burst-${label}`;
      const answers = await Promise.all(Array.from({ length: 50 }, () => http.post<InvocationBody>(endpoint(project), requestBody, keyed(token, key))));

      expect(await runsOf(project)).toBe(1);
      const ids = new Set(answers.map((answer) => answer.body.invocationId));
      expect(ids.size).toBe(1);
      expect([...ids][0]).toEqual(expect.any(String));
      const originals = answers.filter((answer) => answer.body.idempotentReplay !== true);
      expect(originals).toHaveLength(1);
      expect(originals[0]?.status).toBe(mode === 'sync' ? 200 : 202);
      expect(originals[0]?.body.status).toBe(mode === 'sync' ? 'SUCCEEDED' : 'QUEUED');
      for (const replay of answers.filter((answer) => answer.body.idempotentReplay === true)) {
        expect(replayShape(replay)).toEqual({ status: replay.status, idempotentReplay: true, invocationId: [...ids][0] });
      }
    });
  });

  it('a 129-character key is ignored (two runs); a 128-character key is honoured', async () => {
    const { project, token } = await chatbotWithToken();
    const tooLong = 'k'.repeat(129);
    const first = await http.post<InvocationBody>(flowTrigger(project), body, keyed(token, tooLong));
    const second = await http.post<InvocationBody>(flowTrigger(project), body, keyed(token, tooLong));
    expect(first.status).toBe(200);
    expect(second.status).toBe(200);
    expect(first.body.idempotentReplay).toBeUndefined();
    expect(second.body.idempotentReplay).toBeUndefined();
    expect(second.body.invocationId).not.toBe(first.body.invocationId);
    expect(await runsOf(project)).toBe(2);

    const longest = 'k'.repeat(128);
    const third = await http.post<InvocationBody>(flowTrigger(project), body, keyed(token, longest));
    const fourth = await http.post<InvocationBody>(flowTrigger(project), body, keyed(token, longest));
    expect(third.status).toBe(200);
    expect(third.body.idempotentReplay).toBeUndefined();
    expect(fourth.status).toBe(200);
    expect(fourth.body).toMatchObject({ invocationId: third.body.invocationId, idempotentReplay: true });
    expect(await runsOf(project)).toBe(3);
  });

  it('a key is scoped to the mode: the same key on the sync and the async flow endpoint makes two runs', async () => {
    const { project, token } = await chatbotWithToken();
    const sync = await http.post<InvocationBody>(flowTrigger(project), body, keyed(token, 'shared'));
    const async = await http.post<InvocationBody>(flowTriggerAsync(project), body, keyed(token, 'shared'));
    expect(sync.status).toBe(200);
    expect(async.status).toBe(202);
    expect(sync.body.idempotentReplay).toBeUndefined();
    expect(async.body.idempotentReplay).toBeUndefined();
    expect(async.body.invocationId).not.toBe(sync.body.invocationId);
    expect(await runsOf(project)).toBe(2);
    // Each endpoint still replays its own run.
    expect((await http.post<InvocationBody>(flowTrigger(project), body, keyed(token, 'shared'))).body).toMatchObject({
      invocationId: sync.body.invocationId,
      idempotentReplay: true,
    });
    expect((await http.post<InvocationBody>(flowTriggerAsync(project), body, keyed(token, 'shared'))).body).toMatchObject({
      invocationId: async.body.invocationId,
      idempotentReplay: true,
    });
    expect(await runsOf(project)).toBe(2);
  });

  it('a key is scoped to the project: the same key in two projects makes two runs', async () => {
    const one = await chatbotWithToken();
    const two = await chatbotWithToken();
    const first = await http.post<InvocationBody>(flowTrigger(one.project), body, keyed(one.token, 'same-everywhere'));
    const second = await http.post<InvocationBody>(flowTrigger(two.project), body, keyed(two.token, 'same-everywhere'));
    expect(first).toMatchObject({ status: 200, body: { status: 'SUCCEEDED' } });
    expect(second).toMatchObject({ status: 200, body: { status: 'SUCCEEDED' } });
    expect(first.body.idempotentReplay).toBeUndefined();
    expect(second.body.idempotentReplay).toBeUndefined();
    expect(second.body.invocationId).not.toBe(first.body.invocationId);
    expect(await runsOf(one.project)).toBe(1);
    expect(await runsOf(two.project)).toBe(1);
  });

  it('a repeat of a sync run that failed its trigger checks answers 200 with status FAILED, the error and idempotentReplay', async () => {
    const { project, token } = await chatbotWithToken();
    const missingCustomer = { event: 'order.created', orderId: '42' };
    const failed = await http.post<InvocationBody>(flowTrigger(project), missingCustomer, keyed(token, 'bad-request'));
    expect(failed.status).toBe(500);
    expect(failed.body).toEqual({ error: 'Payload is missing required keys: customerId', invocationId: expect.any(String), status: 'FAILED' });

    const replay = await http.post<InvocationBody>(flowTrigger(project), missingCustomer, keyed(token, 'bad-request'));
    expect(replay.status).toBe(200);
    expect(replay.body).toEqual({
      invocationId: failed.body.invocationId,
      status: 'FAILED',
      result: null,
      error: 'Payload is missing required keys: customerId',
      idempotentReplay: true,
    });
    expect(await runsOf(project)).toBe(1);
  });
});

/**
 * What a replay must look like (README "Answers"): 200 with the stored result once finished,
 * 202 without one while in progress. Returned as a plain object so a mismatch shows the answer.
 */
function replayShape(answer: HttpResult<InvocationBody>): object {
  const finished = ['SUCCEEDED', 'FAILED', 'TIMEOUT', 'CANCELLED'].includes(answer.body.status);
  const wellFormed = finished ? answer.status === 200 && 'result' in answer.body : answer.status === 202 && !('result' in answer.body);
  return wellFormed ? { status: answer.status, idempotentReplay: answer.body.idempotentReplay, invocationId: answer.body.invocationId } : { answer };
}

async function waitUntil(condition: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
