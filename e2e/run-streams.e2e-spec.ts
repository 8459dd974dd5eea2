import { followRun, type RunEvent } from '@runline/api-client';
import { JetStreamBus, type Bus } from '@runline/bus';
import { gatewayService } from '@runline/gateway-service';
import { invocationService } from '@runline/invocation-service';
import { createLogger } from '@runline/observability';
import { startService, type RunningService } from '@runline/runtime';
import { consoleJwt, HttpClient, startTestSystem, testNatsUrl, type TestSystem } from '@runline/testing';
import { createPublishedProject, issueToken, type ProjectFixture } from './gateway-fixtures.js';
import { openEventStream, type ReceivedEvent } from './support/event-stream-client.js';
import { gate, startLocalServer, type LocalServer } from './support/lifecycle-support.js';
import { automationDefinition, invocationPath, runPath, type Json } from './support/runs-support.js';

/** The second gateway's ping interval: short, so a quiet stream shows its pings within the test. */
const FAST_PING_MS = 200;

/**
 * GET /external-invocations/{id}/events (DESIGN section 14): a run followed as it happens,
 * through two gateway replicas on one NATS and one database (each with its own bus connection,
 * so each has its own subscription to the runs' events), one invocation service.
 */
describe('run streams', () => {
  let system: TestSystem;
  let otherBus: Bus;
  let otherGateway: RunningService;
  let first: HttpClient;
  let second: HttpClient;
  let endpoint: LocalServer;
  /** The automation's http node waits on this gate, so a test holds its run RUNNING. */
  let held = gate();
  let project: ProjectFixture;
  let token: string;

  beforeAll(async () => {
    system = await startTestSystem([gatewayService, invocationService], { environment: { OUTBOUND_ALLOWED_CIDRS: '127.0.0.0/8' } });
    otherBus = await JetStreamBus.connect({ url: testNatsUrl(), prefix: system.busPrefix, name: 'second-gateway' });
    otherGateway = await startService(gatewayService, {
      databaseUrl: system.database.url,
      bus: otherBus,
      httpPort: 0,
      environment: { ...system.environment, RUN_STREAM_PING_MS: String(FAST_PING_MS) },
      logger: createLogger({ service: 'gateway-2', level: 'silent' }),
    });
    first = new HttpClient(system.url('gateway'));
    second = new HttpClient(otherGateway.url);
    endpoint = await startLocalServer(async () => {
      await held.opened;
      return { status: 200, body: { ok: true } };
    });
    project = await createPublishedProject(
      first,
      'AUTOMATION',
      automationDefinition({
        trigger: { externalEnabled: true, key: 'external_event', expectedPayload: { orderId: '' } },
        start: 'call',
        nodes: {
          call: { type: 'http', method: 'POST', url: `${endpoint.url}/orders`, saveAs: 'reply', next: 'done' },
          done: { type: 'return', value: "{ 'ok': true, 'orderId': payload.orderId }" },
        },
      }),
    );
    token = (await issueToken(first, project, ['automation:trigger'])).token;
  }, 60_000);

  afterAll(async () => {
    held.open();
    await otherGateway?.stop();
    await otherBus?.close();
    await system?.stop();
    await endpoint?.close();
  });

  /** Starts a run that stays RUNNING until `held` opens. */
  async function startHeldRun(): Promise<string> {
    held = gate();
    const accepted = await first.post<Json>(runPath('automationTriggerAsync', project), { payload: { orderId: '42' } }, { bearer: token });
    expect(accepted.status).toBe(202);
    return accepted.body.invocationId as string;
  }

  const eventsUrl = (client: HttpClient, id: string, orgId = project.orgId) => `${client.baseUrl}${invocationPath(orgId, id)}/events`;
  const statuses = (events: ReceivedEvent[]) => events.filter((event) => event.event === 'status').map((event) => (event.data as Json).status);

  it('sends each status as it happens, then end with the invocation as GET answers it, then closes', async () => {
    const id = await startHeldRun();
    const stream = await openEventStream(eventsUrl(first, id), { bearer: token });
    expect(stream.status).toBe(200);
    expect(stream.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const before = await stream.waitForEvents(2);
    expect(statuses(before)).toEqual(['QUEUED', 'RUNNING']);

    held.open();
    await stream.closed;
    const events = stream.events;
    expect(events.map((event) => event.event)).toEqual(['status', 'status', 'step', 'step', 'status', 'end']);
    expect(statuses(events)).toEqual(['QUEUED', 'RUNNING', 'SUCCEEDED']);
    for (const event of events.filter((each) => each.event === 'status')) expect((event.data as Json).at).toEqual(expect.stringMatching(/^\d{4}-\d\d-\d\dT/));
    const ids = events.map((event) => event.id as number);
    expect(ids.every((value, index) => index === 0 || value > ids[index - 1]!)).toBe(true);
    const read = await first.get<Json>(invocationPath(project.orgId, id), { bearer: token });
    const end = events.at(-1)!.data as Json;
    expect(end).toEqual(read.body);
    expect(end).toMatchObject({ invocationId: id, status: 'SUCCEEDED', result: { ok: true, orderId: '42' } });
    // Each step as GET shows it in `steps`.
    expect(events.filter((event) => event.event === 'step').map((event) => (event.data as Json).step)).toEqual(read.body.steps);
  });

  it("a finished run's stream sends its whole history at once and closes after end; after end there is nothing more (204)", async () => {
    const id = await startHeldRun();
    held.open();
    const live = await openEventStream(eventsUrl(first, id), { bearer: token });
    await live.closed;

    const replayed = await openEventStream(eventsUrl(second, id), { bearer: token });
    await replayed.closed;
    expect(replayed.events).toEqual(live.events);
    expect(replayed.events.map((event) => event.event)).toEqual(['status', 'status', 'step', 'step', 'status', 'end']);

    const afterEnd = await openEventStream(eventsUrl(first, id), { bearer: token, lastEventId: replayed.events.at(-1)!.id! });
    expect(afterEnd.status).toBe(204);
  });

  it('a stream cut and resumed with Last-Event-ID through the other gateway loses and repeats nothing', async () => {
    const id = await startHeldRun();
    const cut = await openEventStream(eventsUrl(first, id), { bearer: token });
    const seen = await cut.waitForEvents(1);
    cut.abort();
    // The resumed stream starts after the last event seen, on the other replica, while the run goes on.
    const resumed = await openEventStream(eventsUrl(second, id), { bearer: token, lastEventId: seen[0]!.id! });
    await resumed.waitForEvents(1);
    held.open();
    await resumed.closed;

    const whole = await openEventStream(eventsUrl(first, id), { bearer: token });
    await whole.closed;
    const joined = [...seen, ...resumed.events];
    expect(joined.map((event) => event.id)).toEqual(whole.events.map((event) => event.id));
    expect(joined).toEqual(whole.events);
    expect(statuses(joined)).toEqual(['QUEUED', 'RUNNING', 'SUCCEEDED']);
  });

  it('a stream on one replica hears a transition committed while it was open (live, not replayed)', async () => {
    const id = await startHeldRun();
    const stream = await openEventStream(eventsUrl(second, id), { bearer: token });
    await stream.waitForEvents(2);
    const openedAt = Date.now();
    held.open();
    await stream.closed;
    expect(statuses(stream.events)).toEqual(['QUEUED', 'RUNNING', 'SUCCEEDED']);
    expect(Date.now() - openedAt).toBeLessThan(5000);
  });

  it('sends a ping comment every RUN_STREAM_PING_MS while nothing happens', async () => {
    const id = await startHeldRun();
    const stream = await openEventStream(eventsUrl(second, id), { bearer: token });
    await stream.waitForEvents(2);
    await new Promise((resolve) => setTimeout(resolve, FAST_PING_MS * 4));
    expect(stream.pings).toBeGreaterThanOrEqual(2);
    held.open();
    await stream.closed;
  });

  it('a console JWT of a member follows the run too', async () => {
    const id = await startHeldRun();
    held.open();
    const stream = await openEventStream(eventsUrl(first, id), { bearer: project.ownerJwt });
    await stream.closed;
    expect(statuses(stream.events)).toEqual(['QUEUED', 'RUNNING', 'SUCCEEDED']);
    expect(stream.events.at(-1)?.event).toBe('end');
  });

  it("sends a flow's messages and steps: each message before the step that said it", async () => {
    const chatbot = await createPublishedProject(first, 'CHATBOT');
    const flowToken = (await issueToken(first, chatbot, ['flow:trigger'])).token;
    const accepted = await first.post<Json>(runPath('flowTriggerAsync', chatbot), { event: 'order.created', customerId: 'c-1', orderId: '42' }, { bearer: flowToken });
    expect(accepted.status).toBe(202);
    const stream = await openEventStream(eventsUrl(first, accepted.body.invocationId as string, chatbot.orgId), { bearer: flowToken });
    await stream.closed;
    expect(stream.events.map((event) => event.event)).toEqual(['status', 'status', 'message', 'step', 'step', 'status', 'end']);
    expect(stream.events[2]!.data).toEqual({ text: 'Order 42' });
    expect(stream.events.filter((event) => event.event === 'step').map((event) => ((event.data as Json).step as Json).nodeId)).toEqual(['n1', 'n2']);
  });

  it('sends steps as they are recorded, while the run goes on; the same events, ids and data, as a replay of the finished run', async () => {
    // Two held calls: the stream is open before the first ends, and the steps between them can only come live.
    const firstCall = gate();
    const secondCall = gate();
    const calls = await startLocalServer(async (_call, request) => {
      await (request.url === '/first' ? firstCall : secondCall).opened;
      return { status: 200, body: { ok: true } };
    });
    try {
      const stepping = await createPublishedProject(
        first,
        'AUTOMATION',
        automationDefinition({
          trigger: { externalEnabled: true, key: 'external_event', expectedPayload: { orderId: '' } },
          start: 'first',
          nodes: {
            first: { type: 'http', method: 'GET', url: `${calls.url}/first`, saveAs: 'one', next: 'prepare' },
            prepare: { type: 'set', values: { orderId: 'payload.orderId' }, next: 'second' },
            second: { type: 'http', method: 'GET', url: `${calls.url}/second`, saveAs: 'two', next: 'done' },
            done: { type: 'return', value: "{ 'ok': true }" },
          },
        }),
      );
      const steppingToken = (await issueToken(first, stepping, ['automation:trigger'])).token;
      const accepted = await first.post<Json>(runPath('automationTriggerAsync', stepping), { payload: { orderId: '7' } }, { bearer: steppingToken });
      const id = accepted.body.invocationId as string;
      const stream = await openEventStream(eventsUrl(second, id, stepping.orgId), { bearer: steppingToken });
      await stream.waitForEvents(2);
      firstCall.open();
      const early = await stream.waitForEvents(4);
      expect(early.map((event) => event.event)).toEqual(['status', 'status', 'step', 'step']);
      expect(early.slice(2).map((event) => ((event.data as Json).step as Json).nodeId)).toEqual(['first', 'prepare']);
      // Still in its second call: nothing of this segment is recorded yet.
      const read = await first.get<Json>(invocationPath(stepping.orgId, id), { bearer: steppingToken });
      expect(read.body).toMatchObject({ status: 'RUNNING', steps: [] });
      secondCall.open();
      await stream.closed;

      const replayed = await openEventStream(eventsUrl(first, id, stepping.orgId), { bearer: steppingToken });
      await replayed.closed;
      expect(stream.events).toEqual(replayed.events);
      expect(stream.events.map((event) => event.event)).toEqual(['status', 'status', 'step', 'step', 'step', 'step', 'status', 'end']);
    } finally {
      firstCall.open();
      secondCall.open();
      await calls.close();
    }
  });

  it("the typed client's followRun resumes a dropped connection on the other replica: every event once, in order", async () => {
    const id = await startHeldRun();
    let calls = 0;
    // The first connection drops after its first event; the next ones go to the other gateway.
    const droppingFetch: typeof fetch = async (input, init) => {
      calls += 1;
      if (calls > 1) return fetch(String(input).replace(first.baseUrl, second.baseUrl), init);
      const response = await fetch(input, init);
      const reader = response.body!.getReader();
      let seen = '';
      const cut = new ReadableStream<Uint8Array>({
        async pull(controller) {
          const { value, done } = await reader.read();
          if (done) return controller.close();
          controller.enqueue(value);
          seen += new TextDecoder().decode(value);
          if (seen.includes('\n\n')) {
            await reader.cancel();
            controller.close();
          }
        },
      });
      return new Response(cut, { status: response.status, headers: response.headers });
    };
    const received: RunEvent[] = [];
    setTimeout(() => held.open(), 300);
    for await (const event of followRun(first.baseUrl, token, { orgId: project.orgId, invocationId: id, fetch: droppingFetch, reconnectDelayMs: 50 })) received.push(event);

    expect(calls).toBeGreaterThanOrEqual(2);
    const whole = await openEventStream(eventsUrl(first, id), { bearer: token });
    await whole.closed;
    expect(received.map((event) => event.id)).toEqual(whole.events.map((event) => event.id));
    expect(received.at(-1)).toMatchObject({ event: 'end', data: { invocationId: id, status: 'SUCCEEDED' } });
  });

  describe('the project stream (console): a logs row per change of a run', () => {
    const projectEventsUrl = (client: HttpClient) => `${client.baseUrl}/v1/orgs/${project.orgId}/projects/${project.projectId}/runs/events`;

    it("sends the run's logs row at each change, on any replica, as the logs page shows it", async () => {
      const stream = await openEventStream(projectEventsUrl(second), { bearer: project.ownerJwt });
      expect(stream.status).toBe(200);
      const id = await startHeldRun();
      await new Promise((resolve) => setTimeout(resolve, 200));
      held.open();
      const runRows = async (status: string) => {
        for (;;) {
          const rows = stream.events.filter((event) => (event.data as Json).invocationId === id).map((event) => event.data as Json);
          if (rows.some((row) => row.status === status)) return rows;
          await stream.waitForEvents(stream.events.length + 1, 10_000);
        }
      };
      const rows = await runRows('SUCCEEDED');
      stream.abort();
      expect(stream.events.every((event) => event.event === 'run')).toBe(true);
      expect(rows.map((row) => row.status)).toEqual(expect.arrayContaining(['SUCCEEDED']));
      const logs = await first.get<{ data: Json[] }>(`/v1/orgs/${project.orgId}/external-invocations/logs?projectId=${project.projectId}&q=${id}`, { bearer: project.ownerJwt });
      expect(rows.at(-1)).toEqual(logs.body.data[0]);
    });

    it('refuses an API token (403 Unauthorized) and a non-member (404), as the logs do', async () => {
      const byToken = await openEventStream(projectEventsUrl(first), { bearer: token });
      expect(byToken.status).toBe(403);
      expect(byToken.events[0]?.data).toEqual({ error: 'Unauthorized' });
      const stranger = consoleJwt(`stranger-project-${process.pid}`);
      const logs = await first.get<Json>(`/v1/orgs/${project.orgId}/external-invocations/logs?projectId=${project.projectId}`, { bearer: stranger });
      const byStranger = await openEventStream(projectEventsUrl(first), { bearer: stranger });
      expect(byStranger.status).toBe(404);
      expect(byStranger.events[0]?.data).toEqual(logs.body);
    });
  });

  describe('refuses as GET does, with the same status and message', () => {
    let id: string;
    beforeAll(async () => {
      id = await startHeldRun();
      held.open();
    });

    async function expectSameAsGet(path: (id: string) => string, bearer: string | undefined, status: number, error: string): Promise<void> {
      const read = await first.get<Json>(path(id), bearer ? { bearer } : {});
      expect(read.status).toBe(status);
      const stream = await openEventStream(`${first.baseUrl}${path(id)}/events`, bearer ? { bearer } : {});
      expect(stream.status).toBe(status);
      expect(stream.events[0]?.data).toEqual(read.body);
      expect((read.body as Json).error).toBe(error);
    }

    it('401 Missing API token', async () => {
      await expectSameAsGet((run) => invocationPath(project.orgId, run), undefined, 401, 'Missing API token');
    });

    it('403 Token does not match invocation (another token of the project)', async () => {
      const other = await issueToken(first, project, ['automation:trigger']);
      await expectSameAsGet((run) => invocationPath(project.orgId, run), other.token, 403, 'Token does not match invocation');
    });

    it('404 Invocation not found (unknown id)', async () => {
      await expectSameAsGet(() => invocationPath(project.orgId, '00000000-0000-4000-8000-000000000000'), token, 404, 'Invocation not found');
    });

    it("404 for a console user who is not a member of the run's organization", async () => {
      const stranger = consoleJwt(`stranger-${process.pid}`);
      const read = await first.get<Json>(invocationPath(project.orgId, id), { bearer: stranger });
      expect(read.status).toBe(404);
      const stream = await openEventStream(eventsUrl(first, id), { bearer: stranger });
      expect(stream.status).toBe(404);
      expect(stream.events[0]?.data).toEqual(read.body);
    });
  });
});
