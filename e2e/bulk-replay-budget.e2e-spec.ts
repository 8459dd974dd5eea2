import { deadLetterService } from '@runline/dead-letter-service';
import { gatewayService } from '@runline/gateway-service';
import { invocationService } from '@runline/invocation-service';
import { pollingService } from '@runline/polling-service';
import { HttpClient, startTestSystem, type TestSystem } from '@runline/testing';
import { createPublishedProject, publishDefinition, type ProjectFixture } from './gateway-fixtures.js';
import { eventually, gate, startLocalServer, type LocalServer } from './support/lifecycle-support.js';
import { failingChatbot, PollingEndpoint } from './support/polling-endpoint.js';

type DeadLetter = { id: string; replayedAt: string | null; replayStatus: string | null };
type Page = { data: DeadLetter[]; total: number };

const EVENTS = 3;

/**
 * A bulk replay whose runs outlast the gateway's deadline: it answers 200 before the deadline
 * (never 503) with the claimed events `pending`, and those replays go on and record their
 * outcome, each once. The runs are held by the test, not by a clock.
 */
describe('bulk replay whose runs outlast the gateway’s deadline', () => {
  let system: TestSystem;
  let http: HttpClient;
  let endpoint: PollingEndpoint;
  let slow: LocalServer;
  let project: ProjectFixture;
  const held = gate();

  const base = () => `/v1/orgs/${project.orgId}/projects/${project.projectId}`;
  const deadLetters = async () => (await http.get<Page>(`${base()}/dead-letters`, { bearer: project.ownerJwt })).body;

  beforeAll(async () => {
    // The gateway waits 3 s for the dead-letter service, so a bulk replay's budget is 2.4 s.
    system = await startTestSystem([gatewayService, invocationService, pollingService, deadLetterService], {
      environment: { OUTBOUND_ALLOWED_CIDRS: '127.0.0.0/8', ACCESS_CACHE_TTL_MS: '0', SERVICE_REQUEST_TIMEOUT_MS: '3000' },
    });
    http = new HttpClient(system.url('gateway'));
    endpoint = await PollingEndpoint.start();
    slow = await startLocalServer(async () => {
      await held.opened;
      return { status: 200, body: { ok: true } };
    });
    project = await createPublishedProject(http, 'CHATBOT', failingChatbot('downstream unavailable'));
    expect((await http.patch(`${base()}/api-settings`, { defaultEnrollmentPolicy: 'EVERY_MATCH' }, { bearer: project.ownerJwt })).status).toBe(200);
    const items = Array.from({ length: EVENTS }, (_, n) => ({ id: `b${n}`, event: 'e', customerId: `c${n}` }));
    const url = endpoint.script('/api/budget', [{ json: items }]);
    const created = await http.post(`${base()}/polling-triggers`, { source: 'budget', pollKey: 'budget', pollEndpoint: url, intervalMs: 3_600_000 }, { bearer: project.ownerJwt });
    expect(created.status).toBe(201);
    await eventually(`${EVENTS} dead letters`, async () => {
      const page = await deadLetters();
      return page.total === EVENTS && page.data.length === EVENTS ? true : undefined;
    }, 20_000);
    // Fixed now: each replay calls the held endpoint.
    await publishDefinition(http, project, {
      schemaVersion: 1,
      bot: { start: 'hello', nodes: { hello: { type: 'message', text: 'Hi', next: 'end' }, end: { type: 'end' } } },
      flow: {
        trigger: { externalEnabled: true, key: 'external_event' },
        start: 'call',
        nodes: { call: { type: 'http', method: 'POST', url: `${slow.url}/replayed/{{ payload.id }}`, body: 'payload', next: 'done' }, done: { type: 'end' } },
      },
    });
  }, 60_000);
  afterAll(async () => {
    held.open();
    await system?.stop();
    await endpoint?.close();
    await slow?.close();
  });

  it('answers 200 with the claimed events pending, and each of them is replayed once when its run ends', async () => {
    const answer = await http.post<{ matched: number; succeeded: number; failed: number; pending: number; remaining: number }>(
      `${base()}/dead-letters/replay`,
      { filter: {} },
      { bearer: project.ownerJwt },
    );
    // Before the gateway's deadline (past it the answer would be 503), with nothing finished.
    expect(answer.status).toBe(200);
    const { matched, remaining } = answer.body;
    expect(matched).toBeGreaterThan(0);
    expect(answer.body).toEqual({ matched, succeeded: 0, failed: 0, pending: matched, remaining: EVENTS - matched });

    // The claimed events are taken: no second replay of them, by hand or in bulk.
    const claimed = (await deadLetters()).data.filter((letter) => letter.replayedAt !== null);
    expect(claimed).toHaveLength(matched);
    expect(claimed.every((letter) => letter.replayStatus === null)).toBe(true);
    const again = await http.post(`${base()}/dead-letters/${claimed[0]!.id}/replay`, {}, { bearer: project.ownerJwt });
    expect(again).toMatchObject({ status: 422, body: { error: 'Event has already been replayed' } });
    expect((await http.post(`${base()}/dead-letters/replay`, { filter: {}, dryRun: true }, { bearer: project.ownerJwt })).body).toEqual({ matched: remaining });

    held.open();
    await eventually('the pending replays to record SUCCESS', async () => {
      const page = await deadLetters();
      return page.data.filter((letter) => letter.replayStatus === 'SUCCESS').length === matched ? true : undefined;
    }, 20_000);
    if (remaining > 0) {
      const rest = await http.post(`${base()}/dead-letters/replay`, { filter: {} }, { bearer: project.ownerJwt });
      expect(rest).toMatchObject({ status: 200, body: { matched: remaining, succeeded: remaining, failed: 0, pending: 0, remaining: 0 } });
    }
    const final = await deadLetters();
    expect(final.data.map((letter) => letter.replayStatus)).toEqual(Array.from({ length: EVENTS }, () => 'SUCCESS'));
    // One run per event: the endpoint saw each item once.
    expect(slow.calls.map((call) => call.path).sort()).toEqual(Array.from({ length: EVENTS }, (_, n) => `/replayed/b${n}`));
  }, 60_000);
});
