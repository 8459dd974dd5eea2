import { gatewayService } from '@runline/gateway-service';
import { invocationService } from '@runline/invocation-service';
import { HttpClient, queryDatabase, startTestSystem, type TestSystem } from '@runline/testing';
import { createPublishedProject, issueToken, type ProjectFixture } from './gateway-fixtures.js';
import { openEventStream, type OpenEventStream, type ReceivedEvent } from './support/event-stream-client.js';
import { eventually, gate, startLocalServer, type LocalServer } from './support/lifecycle-support.js';
import { automationDefinition, invocationPath, runPath, type Json } from './support/runs-support.js';

/**
 * Live steps on every path that executes a recorded run (DESIGN section 14, issue 33): a sync
 * run, a run under flow control started by its gate at once, one started later by the flow
 * dispatcher, and a sync run under flow control. Each run is held at its first call, then after
 * its first steps: its stream shows those steps while the run still has none recorded, and a
 * replay of the finished run gives the same events, ids and data. (A run executed before it is
 * recorded, a self-contained graph, is nobody's to follow until it has ended: its stream is the
 * replay.)
 */
describe('live steps on every path that executes a run', () => {
  let system: TestSystem;
  let http: HttpClient;
  let endpoint: LocalServer;
  /** Each run's two calls wait on their own gates: `open/<orderId>`, then `held/<orderId>`. */
  const gates = new Map<string, ReturnType<typeof gate>>();
  const gateOf = (name: string) => {
    if (!gates.has(name)) gates.set(name, gate());
    return gates.get(name)!;
  };
  const sql = (query: string, parameters: unknown[]) => queryDatabase(system.database.url, query, parameters);

  beforeAll(async () => {
    system = await startTestSystem([gatewayService, invocationService], { environment: { OUTBOUND_ALLOWED_CIDRS: '127.0.0.0/8', ACCESS_CACHE_TTL_MS: '0' } });
    http = new HttpClient(system.url('gateway'));
    endpoint = await startLocalServer(async (_call, request) => {
      await gateOf((request.url ?? '').slice(1)).opened;
      return { status: 200, body: { ok: true } };
    });
  }, 60_000);

  afterAll(async () => {
    for (const each of gates.values()) each.open();
    await system?.stop();
    await endpoint?.close();
  });

  /** An automation held at `open/<orderId>`, then after two steps at `held/<orderId>`; with flowControl when given. */
  async function automation(flowControl?: Json): Promise<{ project: ProjectFixture; token: string }> {
    const project = await createPublishedProject(
      http,
      'AUTOMATION',
      automationDefinition({
        trigger: { externalEnabled: true, key: 'external_event', expectedPayload: { orderId: '' }, enrollmentPolicy: 'EVERY_MATCH', ...(flowControl ? { flowControl } : {}) },
        start: 'open',
        nodes: {
          open: { type: 'http', method: 'GET', url: `${endpoint.url}/open/{{ payload.orderId }}`, next: 'prepare' },
          prepare: { type: 'set', values: { orderId: 'payload.orderId' }, next: 'call' },
          call: { type: 'http', method: 'GET', url: `${endpoint.url}/held/{{ payload.orderId }}`, saveAs: 'reply', next: 'done' },
          done: { type: 'return', value: "{ 'ok': true }" },
        },
      }),
    );
    const { token } = await issueToken(http, project, ['automation:trigger']);
    return { project, token };
  }

  const eventsUrl = (project: ProjectFixture, id: string) => `${http.baseUrl}${invocationPath(project.orgId, id)}/events`;
  const statuses = (events: ReceivedEvent[]) => events.filter((event) => event.event === 'status').map((event) => (event.data as Json).status);

  async function startAsync(project: ProjectFixture, token: string, orderId: string): Promise<string> {
    const accepted = await http.post<Json>(runPath('automationTriggerAsync', project), { payload: { orderId } }, { bearer: token });
    expect({ status: accepted.status, body: accepted.status === 202 ? null : accepted.body }).toEqual({ status: 202, body: null });
    return accepted.body.invocationId as string;
  }

  /** Starts a sync run (its request waits for its end) and returns its id once it is recorded, with the pending answer. */
  async function startSync(project: ProjectFixture, token: string, orderId: string): Promise<{ id: string; answer: Promise<{ status: number; body: Json }> }> {
    const answer = http.post<Json>(runPath('automationTrigger', project), { payload: { orderId } }, { bearer: token });
    const id = await eventually('the sync run to be recorded', async () => {
      const rows = await sql('SELECT id FROM invocation.invocations WHERE project_id = $1', [project.projectId]);
      return rows[0]?.id as string | undefined;
    });
    return { id, answer };
  }

  /** Waits until the stream has sent the status RUNNING; returns how many events it had then. */
  async function untilRunning(stream: OpenEventStream): Promise<number> {
    for (let count = 1; ; count += 1) {
      const events = await stream.waitForEvents(count);
      if (statuses(events).includes('RUNNING')) return events.length;
    }
  }

  /**
   * Follows run `id` (held at its first call): once it runs, lets its first call through, checks
   * its next two steps come while the run has no step recorded, lets it end, and checks the
   * replay of the finished run is the same stream.
   */
  async function expectLiveThenSameReplay(project: ProjectFixture, token: string, id: string, orderId: string): Promise<ReceivedEvent[]> {
    const stream = await openEventStream(eventsUrl(project, id), { bearer: token });
    expect(stream.status).toBe(200);
    const before = await untilRunning(stream);
    gateOf(`open/${orderId}`).open();
    const early = await stream.waitForEvents(before + 2);
    expect(early.slice(before).map((event) => [event.event, ((event.data as Json).step as Json).nodeId])).toEqual([
      ['step', 'open'],
      ['step', 'prepare'],
    ]);
    // Still in its second call: nothing of this segment is recorded yet, so those came live.
    const read = await http.get<Json>(invocationPath(project.orgId, id), { bearer: token });
    expect(read.body).toMatchObject({ status: 'RUNNING', steps: [] });
    gateOf(`held/${orderId}`).open();
    await stream.closed;

    const replayed = await openEventStream(eventsUrl(project, id), { bearer: token });
    await replayed.closed;
    expect(stream.events).toEqual(replayed.events);
    expect(stream.events.filter((event) => event.event === 'step')).toHaveLength(4);
    expect(stream.events.at(-1)).toMatchObject({ event: 'end', data: { invocationId: id, status: 'SUCCEEDED' } });
    return stream.events;
  }

  it('a sync run (recorded RUNNING, executed as its request waits)', async () => {
    const { project, token } = await automation();
    const { id, answer } = await startSync(project, token, 'sync-1');
    const events = await expectLiveThenSameReplay(project, token, id, 'sync-1');
    expect(statuses(events)).toEqual(['RUNNING', 'SUCCEEDED']);
    expect((await answer).status).toBe(200);
  });

  it('an async run under flow control, started by its gate at once', async () => {
    const { project, token } = await automation({ concurrency: [{ limit: 1 }] });
    const id = await startAsync(project, token, 'gated-1');
    const events = await expectLiveThenSameReplay(project, token, id, 'gated-1');
    expect(statuses(events)).toEqual(['QUEUED', 'RUNNING', 'SUCCEEDED']);
  });

  it('an async run under flow control, started later by the flow dispatcher once the slot frees', async () => {
    const { project, token } = await automation({ concurrency: [{ limit: 1 }] });
    const holder = await startAsync(project, token, 'holder');
    await eventually('the first run to hold the slot', async () => ((await sql('SELECT status FROM invocation.invocations WHERE id = $1', [holder]))[0]?.status === 'RUNNING' ? true : undefined));
    const id = await startAsync(project, token, 'dispatched-1');
    await eventually('the second run to wait for the slot', async () => ((await sql('SELECT 1 FROM invocation.flow_waits WHERE invocation_id = $1', [id])).length === 1 ? true : undefined));
    // The waiting run's stream is open before the slot frees; the dispatcher starts it after the holder ends.
    const ended = openEventStream(eventsUrl(project, holder), { bearer: token });
    gateOf('open/holder').open();
    gateOf('held/holder').open();
    const events = await expectLiveThenSameReplay(project, token, id, 'dispatched-1');
    expect(statuses(events)).toEqual(['QUEUED', 'RUNNING', 'SUCCEEDED']);
    await (await ended).closed;
  });

  it('a sync run under flow control (recorded QUEUED, started through its gate as its request waits)', async () => {
    const { project, token } = await automation({ concurrency: [{ limit: 1 }] });
    const { id, answer } = await startSync(project, token, 'held-sync-1');
    const events = await expectLiveThenSameReplay(project, token, id, 'held-sync-1');
    expect(statuses(events)).toEqual(['QUEUED', 'RUNNING', 'SUCCEEDED']);
    expect((await answer).status).toBe(200);
  });
});
