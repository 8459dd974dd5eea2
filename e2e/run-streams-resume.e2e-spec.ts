import { JetStreamBus, type Bus } from '@runline/bus';
import { gatewayService } from '@runline/gateway-service';
import { invocationService } from '@runline/invocation-service';
import { createLogger } from '@runline/observability';
import { startService, type RunningService } from '@runline/runtime';
import { HttpClient, startTestSystem, testNatsUrl, type TestSystem } from '@runline/testing';
import { createPublishedProject, issueToken, type ProjectFixture } from './gateway-fixtures.js';
import { openEventStream, type OpenEventStream, type ReceivedEvent } from './support/event-stream-client.js';
import { gate, startLocalServer, type LocalServer } from './support/lifecycle-support.js';
import { automationDefinition, chatbotDefinition, invocationPath, runPath, type Json, type RunEndpoint } from './support/runs-support.js';

/**
 * A run stream cut at each of its events and resumed with Last-Event-ID through the other
 * gateway replica (DESIGN section 14, issue 33): what the client saw before the cut and what the
 * resumed stream sends join into the run's whole stream, with nothing lost or repeated, the same
 * ids and data as the stream that was never cut, and a resume after `end` answers 204. The runs
 * say messages, which the streams send live while the run goes on and must replay from the
 * recorded history alike, also when the run fails.
 */
/** The events of each run's stream while it is held at its second call: two statuses, a step, a message, a step. */
const HELD_AFTER = 5;

describe('run streams resumed at any point', () => {
  let system: TestSystem;
  let otherBus: Bus;
  let otherGateway: RunningService;
  let first: HttpClient;
  let second: HttpClient;
  let endpoint: LocalServer;
  /**
   * The runs' two http nodes wait on these gates: the run is RUNNING before its first step (so a
   * stream opened after the 202 hears its steps live), then after its first steps.
   */
  let opening = gate();
  let held = gate();

  beforeAll(async () => {
    system = await startTestSystem([gatewayService, invocationService], { environment: { OUTBOUND_ALLOWED_CIDRS: '127.0.0.0/8' } });
    otherBus = await JetStreamBus.connect({ url: testNatsUrl(), prefix: system.busPrefix, name: 'second-gateway' });
    otherGateway = await startService(gatewayService, {
      databaseUrl: system.database.url,
      bus: otherBus,
      httpPort: 0,
      environment: system.environment,
      logger: createLogger({ service: 'gateway-2', level: 'silent' }),
    });
    first = new HttpClient(system.url('gateway'));
    second = new HttpClient(otherGateway.url);
    endpoint = await startLocalServer(async (_call, request) => {
      await (request.url === '/open' ? opening : held).opened;
      return { status: 200, body: { ok: true } };
    });
  }, 60_000);

  afterAll(async () => {
    opening.open();
    held.open();
    await otherGateway?.stop();
    await otherBus?.close();
    await system?.stop();
    await endpoint?.close();
  });

  interface Case {
    project: ProjectFixture;
    token: string;
    endpoint: RunEndpoint;
    body: Json;
  }

  /** A flow that says a message between its two held calls, another after, then fails: its messages are in no result. */
  async function failingFlow(): Promise<Case> {
    const project = await createPublishedProject(
      first,
      'CHATBOT',
      chatbotDefinition({
        // Every run of the test runs (the default, ONE_TIME per customer, would skip the second).
        trigger: { externalEnabled: true, key: 'external_event', enrollmentPolicy: 'EVERY_MATCH' },
        start: 'open',
        nodes: {
          open: { type: 'http', method: 'GET', url: `${endpoint.url}/open`, next: 'say' },
          say: { type: 'message', text: 'Order {{ payload.orderId }}', next: 'call' },
          call: { type: 'http', method: 'GET', url: `${endpoint.url}/stock`, saveAs: 'stock', next: 'again' },
          again: { type: 'message', text: 'Checking stock', next: 'stop' },
          stop: { type: 'fail', error: 'Out of stock' },
        },
      }),
    );
    const token = (await issueToken(first, project, ['flow:trigger'])).token;
    return { project, token, endpoint: 'flowTriggerAsync', body: { event: 'order.created', customerId: 'c-1', orderId: '42' } };
  }

  /** An automation that says messages (its result is its own value, not its messages) and succeeds. */
  async function talkingAutomation(): Promise<Case> {
    const project = await createPublishedProject(
      first,
      'AUTOMATION',
      automationDefinition({
        trigger: { externalEnabled: true, key: 'external_event', expectedPayload: { orderId: '' }, enrollmentPolicy: 'EVERY_MATCH' },
        start: 'open',
        nodes: {
          open: { type: 'http', method: 'GET', url: `${endpoint.url}/open`, next: 'say' },
          say: { type: 'message', text: 'Order {{ payload.orderId }}', next: 'call' },
          call: { type: 'http', method: 'GET', url: `${endpoint.url}/stock`, saveAs: 'stock', next: 'done' },
          done: { type: 'return', value: "{ 'ok': true, 'messages': ['not a message of the run'] }" },
        },
      }),
    );
    const token = (await issueToken(first, project, ['automation:trigger'])).token;
    return { project, token, endpoint: 'automationTriggerAsync', body: { payload: { orderId: '42' } } };
  }

  async function startHeld(run: Case): Promise<string> {
    opening = gate();
    held = gate();
    const accepted = await first.post<Json>(runPath(run.endpoint, run.project), run.body, { bearer: run.token });
    expect({ status: accepted.status, body: accepted.status === 202 ? null : accepted.body }).toEqual({ status: 202, body: null });
    return accepted.body.invocationId as string;
  }

  const eventsUrl = (client: HttpClient, run: Case, id: string) => `${client.baseUrl}${invocationPath(run.project.orgId, id)}/events`;

  /** The stream of a run never cut, read live from its start on the first gateway; and its replay once finished, on the second. */
  async function wholeStreams(run: Case): Promise<{ live: ReceivedEvent[]; replayed: ReceivedEvent[] }> {
    const id = await startHeld(run);
    const live = await openEventStream(eventsUrl(first, run, id), { bearer: run.token });
    await live.waitForEvents(2);
    opening.open();
    // The steps before the held call come live: nothing of the segment is recorded yet.
    const before = await live.waitForEvents(HELD_AFTER);
    const read = await first.get<Json>(invocationPath(run.project.orgId, id), { bearer: run.token });
    expect(read.body).toMatchObject({ status: 'RUNNING', steps: [] });
    expect(before.map((event) => event.event)).toEqual(['status', 'status', 'step', 'message', 'step']);
    held.open();
    await closedWithin(live, 'the live stream');
    const replayed = await openEventStream(eventsUrl(second, run, id), { bearer: run.token });
    await closedWithin(replayed, 'the replayed stream');
    return { live: live.events, replayed: replayed.events };
  }

  /** Cuts a new run's stream on the first gateway after `seen` events and resumes it on the second; returns both parts joined. */
  async function cutAndResumed(run: Case, seen: number): Promise<{ joined: ReceivedEvent[]; resumedStatus: number }> {
    const id = await startHeld(run);
    const cut = await openEventStream(eventsUrl(first, run, id), { bearer: run.token });
    // Held before its first step, then after its first steps; past them, it goes on (and may end) before the cut.
    if (seen > 2) {
      await cut.waitForEvents(2);
      opening.open();
    }
    if (seen > HELD_AFTER) held.open();
    const before = (await cut.waitForEvents(seen)).slice(0, seen);
    cut.abort();
    const resumed = await openEventStream(eventsUrl(second, run, id), { bearer: run.token, lastEventId: before.at(-1)!.id! });
    opening.open();
    held.open();
    await closedWithin(resumed, `the stream resumed after ${seen} events`);
    return { joined: [...before, ...resumed.events], resumedStatus: resumed.status };
  }

  for (const [name, make] of [
    ['a flow that says messages and fails', failingFlow],
    ['an automation that says a message and succeeds', talkingAutomation],
  ] as const) {
    it(`${name}: the live stream and its replay agree; cut after any event and resumed on the other gateway, nothing is lost or repeated`, async () => {
      const run = await make();
      const { live, replayed } = await wholeStreams(run);
      expect(replayed).toEqual(live);
      expect(live.filter((event) => event.event === 'message').length).toBeGreaterThanOrEqual(1);
      const ids = live.map((event) => event.id!);
      expect(ids.every((value, index) => index === 0 || value > ids[index - 1]!)).toBe(true);
      // Without the run's own data (times, ids), the events each cut run must give.
      const shape = (events: ReceivedEvent[]) => events.map((event) => ({ id: event.id, event: event.event, data: shapeOf(event) }));

      for (let seen = 1; seen < live.length; seen += 1) {
        const { joined, resumedStatus } = await cutAndResumed(run, seen);
        expect({ seen, resumedStatus }).toEqual({ seen, resumedStatus: 200 });
        expect({ seen, events: shape(joined) }).toEqual({ seen, events: shape(live) });
      }
      // Cut after `end`: nothing follows.
      const { resumedStatus } = await cutAndResumed(run, live.length);
      expect(resumedStatus).toBe(204);
    }, 120_000);
  }
});

/** Fails the test, instead of hanging it, when a stream that should end does not. */
async function closedWithin(stream: OpenEventStream, what: string, timeoutMs = 10_000): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_resolve, reject) => (timer = setTimeout(() => reject(new Error(`${what} did not end within ${timeoutMs} ms: ${JSON.stringify(stream.events)}`)), timeoutMs)));
  try {
    await Promise.race([stream.closed, late]);
  } catch (error) {
    stream.abort();
    throw error;
  } finally {
    clearTimeout(timer);
  }
}

/** An event's data without what differs from run to run (ids, times, durations). */
function shapeOf(event: ReceivedEvent): unknown {
  const data = event.data as Json;
  if (event.event === 'status') return { status: data.status };
  if (event.event === 'message') return data;
  if (event.event === 'step') {
    const { nodeId, type, status, error } = data.step as Json;
    return { nodeId, type, status, error };
  }
  return { status: data.status, errorMessage: data.errorMessage, result: data.result };
}
