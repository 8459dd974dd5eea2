import { randomUUID } from 'node:crypto';
import { createRunlineClient } from '@runline/api-client';
import { DEAD_LETTER_QUERY_SUBJECTS, INVOCATION_QUERY_SUBJECTS, POLLING_QUERY_SUBJECTS, SCHEDULER_REQUEST_SUBJECTS, WEBHOOK_QUERY_SUBJECTS } from '@runline/contracts';
import { deadLetterService } from '@runline/dead-letter-service';
import { gatewayService } from '@runline/gateway-service';
import { invocationService } from '@runline/invocation-service';
import { pollingService } from '@runline/polling-service';
import { HttpClient, startTestSystem, type TestSystem } from '@runline/testing';
import { createPublishedProject, issueToken, type ProjectFixture } from './gateway-fixtures.js';
import { eventually, gate } from './support/lifecycle-support.js';
import { failingChatbot, PollingEndpoint } from './support/polling-endpoint.js';

const INVOCATION = 'Invocation service unavailable, retry shortly';
const POLLING = 'Polling service unavailable, retry shortly';
const DEAD_LETTER = 'Dead-letter service unavailable, retry shortly';
const WEBHOOK = 'Webhook service unavailable, retry shortly';
const SCHEDULER = 'Scheduler service unavailable, retry shortly';

type Call = [label: string, send: (http: HttpClient) => Promise<{ status: number; body: unknown }>, message: string];

/**
 * Every route that asks another service over request/reply, the other service down (nobody
 * listening) or silent (answering after the deadline): 503 with that service's message, never
 * 500. The sync trigger's documented 500 `Flow sync trigger failed` is the one exception.
 */
describe('a service that does not answer', () => {
  let project: ProjectFixture;
  let token: string;

  const base = () => `/v1/orgs/${project.orgId}`;
  const projectBase = () => `${base()}/projects/${project.projectId}`;
  /** One request per route kind that asks the invocation, polling, dead-letter or webhook service. */
  const calls = (): Call[] => {
    const jwt = { bearer: project.ownerJwt };
    const api = { bearer: token };
    const id = randomUUID();
    return [
      ['GET a run (token)', (http) => http.get(`${base()}/external-invocations/${id}`, api), INVOCATION],
      ['GET a run (console)', (http) => http.get(`${base()}/external-invocations/${id}`, jwt), INVOCATION],
      ['PATCH cancel', (http) => http.patch(`${base()}/external-invocations/${id}`, { action: 'cancel' }, api), INVOCATION],
      ['PATCH approve (console)', (http) => http.patch(`${base()}/external-invocations/${id}`, { action: 'approve' }, jwt), INVOCATION],
      ['POST trigger-async', (http) => http.post(`${base()}/flows/${project.projectId}/trigger-async`, { payload: {} }, api), INVOCATION],
      ['GET logs', (http) => http.get(`${base()}/external-invocations/logs`, jwt), INVOCATION],
      ['GET metrics', (http) => http.get(`${base()}/external-invocations/metrics`, jwt), INVOCATION],
      ['GET plan', (http) => http.get(`${base()}/plan`, jwt), INVOCATION],
      ['GET polling (token)', (http) => http.get(`${base()}/flows/${project.projectId}/polling`, api), POLLING],
      ['POST polling (token)', (http) => http.post(`${base()}/flows/${project.projectId}/polling`, { source: 's', pollKey: 'k', pollEndpoint: 'https://example.com/x' }, api), POLLING],
      ['DELETE polling (token)', (http) => http.delete(`${base()}/flows/${project.projectId}/polling?pollKey=k`, api), POLLING],
      ['GET polling-triggers', (http) => http.get(`${projectBase()}/polling-triggers`, jwt), POLLING],
      ['GET dead-letters (token)', (http) => http.get(`${base()}/flows/${project.projectId}/dead-letters`, api), DEAD_LETTER],
      ['POST replay (token)', (http) => http.post(`${base()}/flows/${project.projectId}/dead-letters?id=${id}`, {}, api), DEAD_LETTER],
      ['GET dead-letters (console)', (http) => http.get(`${projectBase()}/dead-letters`, jwt), DEAD_LETTER],
      ['POST replay (console)', (http) => http.post(`${projectBase()}/dead-letters/${id}/replay`, {}, jwt), DEAD_LETTER],
      ['POST bulk replay', (http) => http.post(`${projectBase()}/dead-letters/replay`, { filter: {} }, jwt), DEAD_LETTER],
      ['GET webhooks', (http) => http.get(`${projectBase()}/webhooks`, jwt), WEBHOOK],
      ['GET webhook-subscriptions', (http) => http.get(`${projectBase()}/webhook-subscriptions`, jwt), WEBHOOK],
      ['POST webhooks', (http) => http.post(`${projectBase()}/webhooks`, { name: 'orders' }, jwt), WEBHOOK],
      ['DELETE webhooks', (http) => http.delete(`${projectBase()}/webhooks/${id}`, jwt), WEBHOOK],
      [
        'POST webhook-subscriptions',
        (http) => http.post(`${projectBase()}/webhook-subscriptions`, { provider: 'stripe', events: 'charge.succeeded', credentials: { secretKey: 'sk_test_0123456789abcdef' } }, jwt),
        WEBHOOK,
      ],
      ['POST webhook-subscriptions retry', (http) => http.post(`${projectBase()}/webhook-subscriptions/${id}/retry`, {}, jwt), WEBHOOK],
      ['DELETE webhook-subscriptions', (http) => http.delete(`${projectBase()}/webhook-subscriptions/${id}`, jwt), WEBHOOK],
      ['POST a delivery', (http) => http.post(`/v1/hooks/${id}`, { event: 'e' }, { headers: { 'x-runline-signature': `sha256=${'0'.repeat(64)}` } }), WEBHOOK],
    ];
  };

  describe('nobody listening: the gateway alone', () => {
    let system: TestSystem;
    let http: HttpClient;
    beforeAll(async () => {
      system = await startTestSystem([gatewayService]);
      http = new HttpClient(system.url('gateway'));
      project = await createPublishedProject(http, 'CHATBOT');
      token = (await issueToken(http, project, ['flow:trigger'])).token;
    });
    afterAll(async () => {
      await system?.stop();
    });

    it('answers 503 with the message of the service it asked, on every route kind', async () => {
      const received: string[] = [];
      const expected: string[] = [];
      for (const [label, send, message] of calls()) {
        const answer = await send(http);
        received.push(`${label}: ${answer.status} ${JSON.stringify(answer.body)}`);
        expected.push(`${label}: 503 ${JSON.stringify({ error: message })}`);
      }
      expect(received).toEqual(expected);
    });

    it('answers the sync trigger with its documented 500 Flow sync trigger failed', async () => {
      const answer = await http.post(`${base()}/flows/${project.projectId}/trigger`, { payload: {} }, { bearer: token });
      expect([answer.status, answer.body]).toEqual([500, { error: 'Flow sync trigger failed' }]);
    });
  });

  describe('listening but silent past SERVICE_REQUEST_TIMEOUT_MS', () => {
    let system: TestSystem;
    let http: HttpClient;
    // The responders answer only once the tests are over: whatever the gateway answers, it
    // answers without their reply (a reply after a fixed time would race the gateway's deadline
    // on a slow machine).
    const silence = gate();
    beforeAll(async () => {
      system = await startTestSystem([gatewayService], { environment: { SERVICE_REQUEST_TIMEOUT_MS: '300' } });
      http = new HttpClient(system.url('gateway'));
      project = await createPublishedProject(http, 'CHATBOT');
      token = (await issueToken(http, project, ['flow:trigger'])).token;
      // A responder of each service that answers only after the gateway stopped waiting.
      const late = async () => {
        await silence.opened;
        return new Uint8Array();
      };
      for (const subject of [
        INVOCATION_QUERY_SUBJECTS.GET_INVOCATION,
        POLLING_QUERY_SUBJECTS.LIST_POLLING_TRIGGERS,
        DEAD_LETTER_QUERY_SUBJECTS.LIST_DEAD_LETTERS,
        WEBHOOK_QUERY_SUBJECTS.LIST_INBOUND_HOOKS,
      ]) {
        await system.bus.reply(subject, 'silent', late);
      }
    });
    afterAll(async () => {
      silence.open();
      await system?.stop();
    });

    it.each([
      ['a run', () => `${base()}/external-invocations/${randomUUID()}`, INVOCATION],
      ['polling triggers', () => `${projectBase()}/polling-triggers`, POLLING],
      ['dead letters', () => `${projectBase()}/dead-letters`, DEAD_LETTER],
      ['inbound hooks', () => `${projectBase()}/webhooks`, WEBHOOK],
    ])('GET %s: 503 with the service’s message once the deadline passed', async (_what, path, message) => {
      const started = performance.now();
      const answer = await http.get(path(), { bearer: project.ownerJwt });
      expect([answer.status, answer.body]).toEqual([503, { error: message }]);
      expect(performance.now() - started).toBeGreaterThanOrEqual(250);
    });
  });

  describe('the scheduler, asked by the invocation service on a cancel or reschedule', () => {
    let system: TestSystem;
    let http: HttpClient;
    let scheduledId: string;
    // Through the typed client: the 503 is one of the document's refusals of this route.
    const run = () => ({ params: { path: { orgId: project.orgId, invocationId: scheduledId } } });
    const patch = async (body: { action: 'cancel' } | { action: 'reschedule'; delaySeconds: number }) => {
      const { error, response } = await createRunlineClient(http.baseUrl, token).PATCH('/v1/orgs/{orgId}/external-invocations/{invocationId}', { ...run(), body });
      return { status: response.status, body: error };
    };
    const status = async () => (await createRunlineClient(http.baseUrl, token).GET('/v1/orgs/{orgId}/external-invocations/{invocationId}', run())).data;

    beforeAll(async () => {
      // No scheduler: a run can still be scheduled (its job travels through the outbox).
      system = await startTestSystem([gatewayService, invocationService]);
      http = new HttpClient(system.url('gateway'));
      project = await createPublishedProject(http, 'CHATBOT');
      token = (await issueToken(http, project, ['flow:trigger'])).token;
      const accepted = await http.post<{ invocationId: string; status: string }>(
        `${base()}/flows/${project.projectId}/trigger-async`,
        { payload: { orderId: 's-1' }, delaySeconds: 3_600 },
        { bearer: token },
      );
      expect([accepted.status, accepted.body.status]).toEqual([202, 'SCHEDULED']);
      scheduledId = accepted.body.invocationId;
    });
    afterAll(async () => {
      await system?.stop();
    });

    it('answers 503 Scheduler service unavailable to a cancel and a reschedule while nobody listens, and changes nothing', async () => {
      const before = await status();
      expect(before?.status).toBe('SCHEDULED');
      expect(await patch({ action: 'cancel' })).toMatchObject({ status: 503, body: { error: SCHEDULER } });
      expect(await patch({ action: 'reschedule', delaySeconds: 60 })).toMatchObject({ status: 503, body: { error: SCHEDULER } });
      expect(await status()).toEqual(before);
    });

    it('answers 503 Scheduler service unavailable when the scheduler answers too late, and changes nothing', async () => {
      const before = await status();
      // Answers only once the cancel has been answered: later than the invocation service waits
      // for the scheduler (5 s, sooner than the gateway waits, 10 s), whatever the machine's speed.
      const silence = gate();
      await system.bus.reply(SCHEDULER_REQUEST_SUBJECTS.CANCEL_JOB, 'silent', async () => {
        await silence.opened;
        return new Uint8Array();
      });
      try {
        expect(await patch({ action: 'cancel' })).toMatchObject({ status: 503, body: { error: SCHEDULER } });
      } finally {
        silence.open();
      }
      expect(await status()).toEqual(before);
    }, 30_000);
  });

  describe('the invocation service, asked by the dead-letter service on a replay', () => {
    let system: TestSystem;
    let http: HttpClient;
    let endpoint: PollingEndpoint;
    type Letter = { id: string; replayedAt: string | null; replayStatus: string | null };
    const letters = async () => (await http.get<{ data: Letter[]; total: number }>(`${projectBase()}/dead-letters`, { bearer: project.ownerJwt })).body;

    beforeAll(async () => {
      system = await startTestSystem([gatewayService, invocationService, pollingService, deadLetterService], { environment: { OUTBOUND_ALLOWED_CIDRS: '127.0.0.0/8' } });
      http = new HttpClient(system.url('gateway'));
      endpoint = await PollingEndpoint.start();
      project = await createPublishedProject(http, 'CHATBOT', failingChatbot('downstream unavailable'));
      expect((await http.patch(`${projectBase()}/api-settings`, { defaultEnrollmentPolicy: 'EVERY_MATCH' }, { bearer: project.ownerJwt })).status).toBe(200);
      const url = endpoint.script('/api/replays', [{ json: [1, 2].map((n) => ({ id: `r${n}`, event: 'e', customerId: `c${n}` })) }]);
      const created = await http.post(`${projectBase()}/polling-triggers`, { source: 'replays', pollKey: 'replays', pollEndpoint: url, intervalMs: 3_600_000 }, { bearer: project.ownerJwt });
      expect(created.status).toBe(201);
      await eventually('two dead letters', async () => ((await letters()).data.length === 2 ? true : undefined), 20_000);
      // From here on nobody answers invocation.req.start-invocation.
      await system.services.get('invocation')!.stop();
    }, 60_000);
    afterAll(async () => {
      await system?.stop();
      await endpoint?.close();
    });

    it('answers a replay and a bulk replay 503 Invocation service unavailable, and the events stay unreplayed for a later try', async () => {
      const [first] = (await letters()).data;
      expect(await http.post(`${projectBase()}/dead-letters/${first!.id}/replay`, {}, { bearer: project.ownerJwt })).toMatchObject({ status: 503, body: { error: INVOCATION } });
      expect(await http.post(`${projectBase()}/dead-letters/replay`, { filter: {} }, { bearer: project.ownerJwt })).toMatchObject({ status: 503, body: { error: INVOCATION } });
      // Not replayed: no claim kept, no FAILED recorded, both still counted for a bulk replay.
      expect((await letters()).data.map((letter) => [letter.replayedAt, letter.replayStatus])).toEqual([
        [null, null],
        [null, null],
      ]);
      expect((await http.post(`${projectBase()}/dead-letters/replay`, { filter: {}, dryRun: true }, { bearer: project.ownerJwt })).body).toEqual({ matched: 2 });
    });
  });
});
