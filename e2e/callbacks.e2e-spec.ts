import { createHmac, timingSafeEqual } from 'node:crypto';
import { gatewayService } from '@runline/gateway-service';
import { invocationService } from '@runline/invocation-service';
import { schedulerService } from '@runline/scheduler-service';
import { HttpClient, queryDatabase, startTestSystem, type TestSystem } from '@runline/testing';
import { createPublishedProject, issueToken, type ProjectFixture } from './gateway-fixtures.js';
import { startCallbackProcess } from './support/callback-process.js';
import {
  selfSignedCertificate,
  startCuttingReceiver,
  startHttpsReceiver,
  type HttpsReceiver,
  type ReceivedCallback,
  type TestCertificate,
} from './support/https-receiver.js';
import { eventually, startLocalServer, waitForFinalInvocation, type InvocationBody, type LocalServer } from './support/lifecycle-support.js';
import { freePort, type RunningProcess } from './support/processes.js';

type Json = Record<string, unknown>;

const automation = (trigger: Json = {}, nodes?: Json) => ({
  schemaVersion: 1,
  workflow: {
    trigger: { externalEnabled: true, key: 'external_event', ...trigger },
    start: 'n1',
    nodes: nodes ?? { n1: { type: 'return', value: "{ 'ok': true, 'orderId': payload.orderId }" } },
  },
});

/** The receiver's check, as the README shows it: HMAC over the exact bytes, constant-time compare. */
function verifiesServiceSignature(request: ReceivedCallback, secret: string): boolean {
  const sent = String(request.headers['x-service-signature'] ?? '');
  const expected = createHmac('sha256', secret).update(request.raw).digest('hex');
  return sent.length === expected.length && timingSafeEqual(Buffer.from(sent), Buffer.from(expected));
}

/** Standard Webhooks: v1,base64(HMAC-SHA256(key, `${id}.${timestamp}.${body}`)), key = the secret's bytes. */
function verifiesStandardWebhook(request: ReceivedCallback, secret: string): boolean {
  const id = String(request.headers['webhook-id']);
  const timestamp = String(request.headers['webhook-timestamp']);
  const expected = createHmac('sha256', Buffer.from(secret, 'utf8')).update(`${id}.${timestamp}.`).update(request.raw).digest('base64');
  return String(request.headers['webhook-signature'] ?? '').split(' ').includes(`v1,${expected}`);
}

describe('run-finished callbacks over HTTPS', () => {
  let system: TestSystem;
  let http: HttpClient;
  let certificate: TestCertificate;
  let receiver: HttpsReceiver;
  let callback: RunningProcess;
  // Answers after 8 s: longer than this system's async run time limit (ASYNC_RUN_TIMEOUT_MS).
  let slowEndpoint: LocalServer;
  let project: ProjectFixture;
  let token: string;
  let path = 0;
  const nextPath = () => `/hook/${++path}`;

  const triggerAsync = async (body: Json, target: { project: ProjectFixture; token: string } = { project, token }) => {
    const answer = await http.post<InvocationBody>(
      `/v1/orgs/${target.project.orgId}/automations/${target.project.projectId}/trigger-async`,
      { payload: { orderId: 'o-1' }, ...body },
      { bearer: target.token },
    );
    expect(answer.status).toBe(202);
    return answer.body.invocationId;
  };
  const read = (id: string, target: { project: ProjectFixture; token: string } = { project, token }) =>
    http.get<InvocationBody>(`/v1/orgs/${target.project.orgId}/external-invocations/${id}`, { bearer: target.token });
  const attemptsOf = async (id: string, count: number, target = { project, token }) =>
    eventually(`${count} callback attempts of ${id}`, async () => {
      const attempts = (await read(id, target)).body.callbackAttempts as Json[];
      return attempts.length >= count ? attempts : undefined;
    }, 20_000);

  const sql = (query: string, parameters: unknown[]) => queryDatabase(system.database.url, query, parameters);
  /**
   * Waits until the callback service has ended the run's delivery: DELIVERED (a 2xx) or FAILED
   * (every attempt used). An ended delivery has no next attempt, so the receiver's count is final.
   */
  const deliveryEnded = (id: string, status: 'DELIVERED' | 'FAILED') =>
    eventually(`the callback of ${id} to be ${status}`, async () => {
      const [row] = await sql('SELECT status FROM callback.callback_deliveries WHERE invocation_id = $1', [id]);
      return row?.status === status ? true : undefined;
    }, 20_000);
  /**
   * DeliverCallback commands the invocation service wrote for run `id`. The command goes into the
   * outbox in the transaction that records the run's end (run-callback.ts), so once the run reads
   * as ended this count is final: no wait for a callback that might still come is needed.
   */
  const callbackCommandsOf = async (id: string) =>
    Number(
      (await sql(`SELECT count(*)::int AS commands FROM invocation.outbox WHERE subject = 'callback.cmd.deliver-callback' AND position(convert_to($1, 'UTF8') IN data) > 0`, [id]))[0]
        ?.commands,
    );
  /** Callback deliveries the callback service has for the runs `ids`. */
  const deliveriesOf = async (ids: string[]) =>
    ((await sql('SELECT count(*)::int AS deliveries FROM callback.callback_deliveries WHERE invocation_id = ANY($1::uuid[])', [ids])) as Array<{ deliveries: number }>)[0]!
      .deliveries;

  beforeAll(async () => {
    certificate = await selfSignedCertificate();
    receiver = await startHttpsReceiver(certificate);
    system = await startTestSystem([gatewayService, invocationService, schedulerService], {
      environment: { OUTBOUND_ALLOWED_CIDRS: '127.0.0.0/8', ACCESS_CACHE_TTL_MS: '0', ASYNC_RUN_TIMEOUT_MS: '3000' },
    });
    slowEndpoint = await startLocalServer(() => ({ status: 200, body: { late: true }, delayMs: 8_000 }));
    // Its table sweep only once a minute: every retry here (all within seconds) comes from the
    // timer armed for its time, which a check of the time between attempts would otherwise have
    // to show, at the machine's speed.
    callback = await startCallbackProcess(system, certificate.caFile, { CALLBACK_SWEEP_INTERVAL_MS: '60000' });
    http = new HttpClient(system.url('gateway'));
    project = await createPublishedProject(http, 'AUTOMATION', automation());
    token = (await issueToken(http, project, ['automation:trigger'])).token;
  }, 60_000);

  afterAll(async () => {
    if (process.env.CALLBACK_DEBUG) console.log(callback?.output());
    await callback?.stop();
    await system?.stop();
    await receiver?.close();
    await slowEndpoint?.close();
    await certificate?.remove();
  });

  it('POSTs the body once, signed over the raw bytes with both schemes, and records the 2xx', async () => {
    const hook = nextPath();
    const id = await triggerAsync({ webhookUrl: `${receiver.url}${hook}`, webhookSecret: 'whs-1' });
    const [request] = await eventually('the callback', async () => (receiver.at(hook).length > 0 ? receiver.at(hook) : undefined));
    const run = await waitForFinalInvocation(http, project.orgId, id, token);

    expect(request!.method).toBe('POST');
    expect(request!.headers['content-type']).toBe('application/json');
    expect(verifiesServiceSignature(request!, 'whs-1')).toBe(true);
    expect(verifiesServiceSignature(request!, 'another secret')).toBe(false);
    expect(request!.headers['x-service-signature']).toMatch(/^[0-9a-f]{64}$/);
    expect(verifiesStandardWebhook(request!, 'whs-1')).toBe(true);
    expect(request!.headers['webhook-id']).toMatch(/^[0-9a-f-]{36}$/);
    expect(Math.abs(Number(request!.headers['webhook-timestamp']) - Date.now() / 1000)).toBeLessThan(30);
    const body = JSON.parse(request!.raw.toString('utf8')) as Json;
    expect(Object.keys(body)).toEqual(['invocationId', 'status', 'result', 'trace']);
    expect(body).toEqual({ invocationId: id, status: 'SUCCEEDED', result: { ok: true, orderId: 'o-1' }, trace: run.trace });

    const [attempt] = await attemptsOf(id, 1);
    expect(attempt).toMatchObject({ attempt: 1, statusCode: 200, outcome: 'ACKNOWLEDGED', error: null, webhookId: request!.headers['webhook-id'] });
    expect(typeof attempt!.durationMs).toBe('number');
    expect(Date.parse(String(attempt!.attemptedAt))).not.toBeNaN();
    await deliveryEnded(id, 'DELIVERED');
    expect(receiver.at(hook)).toHaveLength(1);
  });

  it('500, 500, 200: exactly 3 attempts, at least 0.5 s then 1 s apart, all in callbackAttempts', async () => {
    const hook = nextPath();
    receiver.on(hook, (call) => ({ status: call < 3 ? 500 : 200 }));
    const id = await triggerAsync({ webhookUrl: `${receiver.url}${hook}`, webhookSecret: 'whs-2' });
    const attempts = await attemptsOf(id, 3);
    await deliveryEnded(id, 'DELIVERED');

    const requests = receiver.at(hook);
    expect(requests).toHaveLength(3);
    const [first, second, third] = requests.map((request) => request.at);
    // The waits, never shorter than the schedule. How late a retry comes after its time depends on
    // the machine, so it is measured by `npm run bench:callbacks` (retry lateness), not here; the
    // schedule itself (0.5 s, then 1 s, from the end of the attempt) is delivery-rules.spec.ts's.
    expect(second! - first!).toBeGreaterThanOrEqual(500);
    expect(third! - second!).toBeGreaterThanOrEqual(1000);
    expect(new Set(requests.map((request) => request.headers['webhook-id'])).size).toBe(1);
    expect(new Set(requests.map((request) => request.raw.toString('base64'))).size).toBe(1);
    for (const request of requests) expect(verifiesServiceSignature(request, 'whs-2')).toBe(true);
    expect(attempts.map((attempt) => [attempt.attempt, attempt.statusCode, attempt.outcome])).toEqual([
      [1, 500, 'HTTP_ERROR'],
      [2, 500, 'HTTP_ERROR'],
      [3, 200, 'ACKNOWLEDGED'],
    ]);
    expect((await read(id)).body.callbackAttempts).toHaveLength(3);
  });

  it('an answer after 11 s fails that attempt (timeout) and the next attempt delivers', async () => {
    const hook = nextPath();
    receiver.on(hook, (call) => (call === 1 ? { status: 200, delayMs: 11_000 } : { status: 200 }));
    const id = await triggerAsync({ webhookUrl: `${receiver.url}${hook}` });
    const attempts = await attemptsOf(id, 2);
    expect(attempts[0]).toMatchObject({ attempt: 1, statusCode: null, outcome: 'TIMEOUT', error: 'no answer within 10 s' });
    expect(Number(attempts[0]!.durationMs)).toBeGreaterThanOrEqual(10_000);
    expect(Number(attempts[0]!.durationMs)).toBeLessThan(11_000);
    expect(attempts[1]).toMatchObject({ attempt: 2, statusCode: 200, outcome: 'ACKNOWLEDGED' });
    const [first, second] = receiver.at(hook);
    // Unsigned without a secret; the webhook-id still identifies the repeat.
    expect(first!.headers['x-service-signature']).toBeUndefined();
    expect(second!.headers['webhook-id']).toBe(first!.headers['webhook-id']);
  }, 40_000);

  it('a 301 is not followed: every attempt fails with 301 and the Location is never requested', async () => {
    const hook = nextPath();
    const moved = nextPath();
    receiver.on(hook, () => ({ status: 301, headers: { location: `${receiver.url}${moved}` } }));
    const id = await triggerAsync({ webhookUrl: `${receiver.url}${hook}` });
    const attempts = await attemptsOf(id, 3);
    await deliveryEnded(id, 'FAILED');
    expect(attempts.map((attempt) => [attempt.statusCode, attempt.outcome])).toEqual([
      [301, 'HTTP_ERROR'],
      [301, 'HTTP_ERROR'],
      [301, 'HTTP_ERROR'],
    ]);
    expect(attempts[0]!.error).toBe('receiver answered 301; redirects are not followed');
    expect(receiver.at(hook)).toHaveLength(3);
    expect(receiver.at(moved)).toHaveLength(0);
  });

  it('URL and secret: request, then the Trigger node Callback Override, then the project default', async () => {
    const [requestHook, overrideHook, defaultHook] = [nextPath(), nextPath(), nextPath()];
    const withOverride = await createPublishedProject(
      http,
      'AUTOMATION',
      automation({ callback: { url: `${receiver.url}${overrideHook}`, secret: 'override-secret' } }),
    );
    const settings = await http.patch(
      `/v1/orgs/${withOverride.orgId}/projects/${withOverride.projectId}/api-settings`,
      { defaultCallbackUrl: `${receiver.url}${defaultHook}`, defaultCallbackSecret: 'default-secret' },
      { bearer: withOverride.ownerJwt },
    );
    expect(settings.status).toBe(200);
    const overrideTarget = { project: withOverride, token: (await issueToken(http, withOverride, ['automation:trigger'])).token };

    const plain = await createPublishedProject(http, 'AUTOMATION', automation());
    expect(
      (await http.patch(`/v1/orgs/${plain.orgId}/projects/${plain.projectId}/api-settings`,
        { defaultCallbackUrl: `${receiver.url}${defaultHook}`, defaultCallbackSecret: 'default-secret' }, { bearer: plain.ownerJwt })).status,
    ).toBe(200);
    const defaultTarget = { project: plain, token: (await issueToken(http, plain, ['automation:trigger'])).token };
    // The gateway's settings reach the invocation service as events: wait until its copies have them.
    await eventually('the default callbacks to reach the invocation service', async () => {
      const copies = await sql('SELECT default_callback_url FROM invocation.project_copies WHERE project_id = ANY($1::uuid[])', [
        [withOverride.projectId, plain.projectId],
      ]);
      return copies.length === 2 && copies.every((copy) => copy.default_callback_url === `${receiver.url}${defaultHook}`) ? true : undefined;
    });

    const byRequest = await triggerAsync({ webhookUrl: `${receiver.url}${requestHook}`, webhookSecret: 'request-secret' }, overrideTarget);
    const byOverride = await triggerAsync({}, overrideTarget);
    const byDefault = await triggerAsync({}, defaultTarget);
    await attemptsOf(byRequest, 1, overrideTarget);
    await attemptsOf(byOverride, 1, overrideTarget);
    await attemptsOf(byDefault, 1, defaultTarget);

    const bodyOf = (request: ReceivedCallback) => (JSON.parse(request.raw.toString('utf8')) as Json).invocationId;
    expect(receiver.at(requestHook).map(bodyOf)).toEqual([byRequest]);
    expect(receiver.at(overrideHook).map(bodyOf)).toEqual([byOverride]);
    expect(receiver.at(defaultHook).map(bodyOf)).toEqual([byDefault]);
    expect(verifiesServiceSignature(receiver.at(requestHook)[0]!, 'request-secret')).toBe(true);
    expect(verifiesServiceSignature(receiver.at(overrideHook)[0]!, 'override-secret')).toBe(true);
    expect(verifiesServiceSignature(receiver.at(defaultHook)[0]!, 'default-secret')).toBe(true);

    // A sync run never calls back, even with a default URL.
    const sync = await http.post<InvocationBody>(
      `/v1/orgs/${plain.orgId}/automations/${plain.projectId}/trigger`,
      { payload: { orderId: 'sync' } },
      { bearer: defaultTarget.token },
    );
    expect(sync.status).toBe(200);
    // The 200 comes once the run's end is recorded, with any DeliverCallback it asks for: none
    // was written (the async run beside it has its one), so no callback can come later, and the
    // callback service never heard of the run.
    expect(await callbackCommandsOf(byDefault)).toBe(1);
    expect(await callbackCommandsOf(sync.body.invocationId)).toBe(0);
    expect(await deliveriesOf([sync.body.invocationId])).toBe(0);
    expect(receiver.at(defaultHook).map(bodyOf)).toEqual([byDefault]);
    expect((await read(sync.body.invocationId, defaultTarget)).body.callbackAttempts).toEqual([]);
  });

  it('no URL anywhere: no callback', async () => {
    const before = receiver.received.length;
    const id = await triggerAsync({});
    await waitForFinalInvocation(http, project.orgId, id, token);
    // Ended, and no DeliverCallback was written with its end: none can come later (as for the sync run above).
    expect(await callbackCommandsOf(id)).toBe(0);
    expect(await deliveriesOf([id])).toBe(0);
    expect(receiver.received.length).toBe(before);
    expect((await read(id)).body.callbackAttempts).toEqual([]);
  });

  it('a run that hits its time limit calls back with status TIMEOUT and the error, no result', async () => {
    const hook = nextPath();
    const slow = await createPublishedProject(
      http,
      'AUTOMATION',
      automation({}, { n1: { type: 'http', method: 'GET', url: `${slowEndpoint.url}/slow`, saveAs: 'reply', next: 'n2' }, n2: { type: 'return', value: 'vars.reply' } }),
    );
    const target = { project: slow, token: (await issueToken(http, slow, ['automation:trigger'])).token };
    const id = await triggerAsync({ webhookUrl: `${receiver.url}${hook}` }, target);
    const [attempt] = await attemptsOf(id, 1, target);
    expect(attempt).toMatchObject({ attempt: 1, statusCode: 200, outcome: 'ACKNOWLEDGED' });
    const body = JSON.parse(receiver.at(hook)[0]!.raw.toString('utf8')) as Json;
    expect(Object.keys(body)).toEqual(['invocationId', 'status', 'error', 'trace']);
    expect(body).toMatchObject({ invocationId: id, status: 'TIMEOUT' });
    const run = (await read(id, target)).body;
    expect(run.status).toBe('TIMEOUT');
    expect(body.error).toBe(run.errorMessage);
  }, 30_000);

  it('failed runs, flow and bot runs and scheduled runs call back too', async () => {
    const failedHook = nextPath();
    const failing = await createPublishedProject(http, 'AUTOMATION', automation({}, { n1: { type: 'fail', error: 'nope' } }));
    const failingTarget = { project: failing, token: (await issueToken(http, failing, ['automation:trigger'])).token };
    const failedId = await triggerAsync({ webhookUrl: `${receiver.url}${failedHook}` }, failingTarget);
    await attemptsOf(failedId, 1, failingTarget);
    const failedBody = JSON.parse(receiver.at(failedHook)[0]!.raw.toString('utf8')) as Json;
    expect(Object.keys(failedBody)).toEqual(['invocationId', 'status', 'error', 'trace']);
    expect(failedBody).toMatchObject({ invocationId: failedId, status: 'FAILED' });
    expect(String(failedBody.error)).toContain('nope');

    const scheduledHook = nextPath();
    const scheduledId = await triggerAsync({ webhookUrl: `${receiver.url}${scheduledHook}`, delaySeconds: 0.3 });
    await attemptsOf(scheduledId, 1);
    expect((JSON.parse(receiver.at(scheduledHook)[0]!.raw.toString('utf8')) as Json).invocationId).toBe(scheduledId);

    const chatbot = await createPublishedProject(http, 'CHATBOT');
    const chatbotToken = (await issueToken(http, chatbot, ['flow:trigger', 'bot:invoke'])).token;
    const [flowHook, botHook] = [nextPath(), nextPath()];
    const flow = await http.post<InvocationBody>(
      `/v1/orgs/${chatbot.orgId}/flows/${chatbot.projectId}/trigger-async`,
      { event: 'e', customerId: 'c-1', orderId: 'o-9', webhookUrl: `${receiver.url}${flowHook}` },
      { bearer: chatbotToken },
    );
    const bot = await http.post<InvocationBody>(
      `/v1/orgs/${chatbot.orgId}/bots/${chatbot.projectId}/invoke`,
      { message: 'hi', userName: 'Ada', webhookUrl: `${receiver.url}${botHook}` },
      { bearer: chatbotToken },
    );
    expect([flow.status, bot.status]).toEqual([202, 202]);
    await eventually('flow and bot callbacks', async () => (receiver.at(flowHook).length && receiver.at(botHook).length ? true : undefined));
    expect(JSON.parse(receiver.at(flowHook)[0]!.raw.toString('utf8'))).toMatchObject({ invocationId: flow.body.invocationId, status: 'SUCCEEDED' });
    expect(JSON.parse(receiver.at(botHook)[0]!.raw.toString('utf8'))).toMatchObject({ invocationId: bot.body.invocationId, status: 'SUCCEEDED' });
  });
  describe('failed attempts are recorded with their kind and reason', () => {
    /** The three attempts of a callback that cannot be delivered, once the delivery has FAILED. */
    const failedAttempts = async (webhookUrl: string) => {
      const id = await triggerAsync({ webhookUrl });
      const attempts = await attemptsOf(id, 3);
      await deliveryEnded(id, 'FAILED');
      expect((await read(id)).body.callbackAttempts).toHaveLength(3);
      return attempts;
    };
    const kinds = (attempts: Json[]) => attempts.map((attempt) => [attempt.attempt, attempt.statusCode, attempt.outcome, attempt.error]);

    it('a refused connection (nothing listens on the port): CONNECTION_ERROR, connection refused', async () => {
      const port = await freePort();
      const attempts = await failedAttempts(`https://127.0.0.1:${port}/hook`);
      const error = 'network error reaching 127.0.0.1: connection refused';
      expect(kinds(attempts)).toEqual([
        [1, null, 'CONNECTION_ERROR', error],
        [2, null, 'CONNECTION_ERROR', error],
        [3, null, 'CONNECTION_ERROR', error],
      ]);
    });

    it('an untrusted certificate: TLS_ERROR naming the certificate problem, and nothing reaches the receiver', async () => {
      const untrusted = await selfSignedCertificate();
      const stranger = await startHttpsReceiver(untrusted);
      try {
        const attempts = await failedAttempts(`${stranger.url}/hook`);
        const error = 'network error reaching 127.0.0.1: TLS certificate rejected (DEPTH_ZERO_SELF_SIGNED_CERT)';
        expect(kinds(attempts)).toEqual([
          [1, null, 'TLS_ERROR', error],
          [2, null, 'TLS_ERROR', error],
          [3, null, 'TLS_ERROR', error],
        ]);
        expect(stranger.received).toHaveLength(0);
      } finally {
        await stranger.close();
        await untrusted.remove();
      }
    });

    it('a trusted certificate for another address: TLS_ERROR, the certificate does not match the host name', async () => {
      // The trusted certificate names 127.0.0.1 only; this receiver listens on 127.0.0.2 with it.
      const elsewhere = await startHttpsReceiver(certificate, '127.0.0.2');
      try {
        const attempts = await failedAttempts(`${elsewhere.url}/hook`);
        const error = 'network error reaching 127.0.0.2: TLS certificate does not match the host name';
        expect(kinds(attempts)).toEqual([
          [1, null, 'TLS_ERROR', error],
          [2, null, 'TLS_ERROR', error],
          [3, null, 'TLS_ERROR', error],
        ]);
        expect(elsewhere.received).toHaveLength(0);
      } finally {
        await elsewhere.close();
      }
    });

    it('a host the outbound guard refuses (a local host name): REFUSED with the reason, and nothing is sent', async () => {
      const hook = nextPath();
      // localhost reaches this very receiver, but the guard refuses local host names before it connects.
      const attempts = await failedAttempts(`${receiver.url.replace('127.0.0.1', 'localhost')}${hook}`);
      const error = 'refused: localhost is a local host name';
      expect(kinds(attempts)).toEqual([
        [1, null, 'REFUSED', error],
        [2, null, 'REFUSED', error],
        [3, null, 'REFUSED', error],
      ]);
      expect(receiver.at(hook)).toHaveLength(0);
    });

    it('a connection cut in the middle of the answer: CONNECTION_ERROR, connection reset', async () => {
      const cutting = await startCuttingReceiver(certificate);
      try {
        const attempts = await failedAttempts(`${cutting.url}/hook`);
        const error = 'network error reaching 127.0.0.1: connection reset';
        expect(kinds(attempts)).toEqual([
          [1, null, 'CONNECTION_ERROR', error],
          [2, null, 'CONNECTION_ERROR', error],
          [3, null, 'CONNECTION_ERROR', error],
        ]);
        expect(cutting.cuts()).toBe(3);
      } finally {
        await cutting.close();
      }
    });
  });
});
