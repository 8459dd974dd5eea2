import { deadLetterService } from '@runline/dead-letter-service';
import { gatewayService } from '@runline/gateway-service';
import { invocationService } from '@runline/invocation-service';
import { pollingService } from '@runline/polling-service';
import { HttpClient, queryDatabase, startTestSystem, type TestSystem } from '@runline/testing';
import { createPublishedProject, issueToken, publishDefinition, type ProjectFixture } from './gateway-fixtures.js';
import { eventually } from './support/lifecycle-support.js';
import { failingChatbot, PollingEndpoint, reportingChatbot } from './support/polling-endpoint.js';

type DeadLetter = Record<string, unknown> & {
  id: string;
  source: string;
  createdAt: string;
  replayedAt: string | null;
  replayStatus: string | null;
  requestPayload: Record<string, unknown>;
};
type Page = { data: DeadLetter[]; total: number; limit: number; offset: number; error?: string };

/** Listing and replaying dead letters through the HTTP API, including the /automations extension. */
describe('dead letters', () => {
  let system: TestSystem;
  let http: HttpClient;
  let endpoint: PollingEndpoint;
  let project: ProjectFixture;
  let token: string;

  const base = () => `/v1/orgs/${project.orgId}/flows/${project.projectId}`;
  const page = async (query = '') => (await http.get<Page>(`${base()}/dead-letters${query}`, { bearer: token })).body;
  const replay = (id: string) => http.post<{ success?: boolean; error?: string }>(`${base()}/dead-letters?id=${id}`, {}, { bearer: token });

  /** One poll of `items` under `pollKey`, and the dead letters it leaves. */
  async function pollOnce(pollKey: string, source: string, items: object[], expected: number): Promise<DeadLetter[]> {
    const url = endpoint.script(`/api/${pollKey}`, [{ json: items }]);
    const created = await http.post(`${base()}/polling`, { source, pollKey, pollEndpoint: url, intervalMs: 3_600_000 }, { bearer: token });
    expect(created.status).toBe(201);
    return eventually(`${expected} dead letters of ${source}`, async () => {
      const found = await page(`?source=${source}`);
      // The page and the total are read apart: wait until both show every letter.
      return found.total === expected && found.data.length === expected ? found.data : undefined;
    });
  }

  beforeAll(async () => {
    system = await startTestSystem([gatewayService, invocationService, pollingService, deadLetterService], {
      environment: { OUTBOUND_ALLOWED_CIDRS: '127.0.0.0/8', ACCESS_CACHE_TTL_MS: '0' },
    });
    http = new HttpClient(system.url('gateway'));
    endpoint = await PollingEndpoint.start();
    project = await createPublishedProject(http, 'CHATBOT', reportingChatbot(endpoint.url));
    await http.patch(`/v1/orgs/${project.orgId}/projects/${project.projectId}/api-settings`, { defaultEnrollmentPolicy: 'EVERY_MATCH' }, { bearer: project.ownerJwt });
    token = (await issueToken(http, project, ['flow:trigger'])).token;
    // Items without customerId fail the trigger checks.
    await pollOnce('alpha', 'alpha', [1, 2, 3].map((id) => ({ id, event: 'e' })), 3);
    await pollOnce('beta', 'beta', [4, 5].map((id) => ({ id, event: 'e' })), 2);
  });
  afterAll(async () => {
    await system?.stop();
    await endpoint?.close();
  });

  it('lists newest first with total, limit and offset, filtered by source', async () => {
    const all = await page();
    expect(all.total).toBe(5);
    expect(all.limit).toBe(50);
    expect(all.offset).toBe(0);
    const times = all.data.map((letter) => Date.parse(letter.createdAt));
    expect([...times].sort((a, b) => b - a)).toEqual(times);
    expect(all.data.slice(0, 2).map((letter) => letter.source)).toEqual(['beta', 'beta']);

    const alpha = await page('?source=alpha');
    expect(alpha.total).toBe(3);
    expect(alpha.data.every((letter) => letter.source === 'alpha')).toBe(true);

    const second = await page('?limit=2&offset=1');
    expect(second).toMatchObject({ total: 5, limit: 2, offset: 1 });
    expect(second.data.map((letter) => letter.id)).toEqual(all.data.slice(1, 3).map((letter) => letter.id));
  });

  it('holds limit to at most 200 and offset to at least 0', async () => {
    expect(await page('?limit=500')).toMatchObject({ limit: 200, total: 5 });
    const negative = await page('?offset=-5');
    expect(negative).toMatchObject({ offset: 0, total: 5 });
    expect(negative.data).toHaveLength(5);
    expect(await page('?offset=4')).toMatchObject({ offset: 4 });
    expect((await page('?offset=4')).data).toHaveLength(1);
    const bad = await http.get<{ error: string }>(`${base()}/dead-letters?limit=abc`, { bearer: token });
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual({ error: 'limit must be an integer' });
  });

  it('replays a failing event once: 422 with the reason, then "Event has already been replayed"', async () => {
    const [letter] = (await page('?source=alpha')).data;
    const failed = await replay(letter!.id);
    expect(failed.status).toBe(422);
    expect(failed.body).toEqual({ error: 'Payload is missing required keys: customerId' });
    const after = (await page('?source=alpha')).data.find((candidate) => candidate.id === letter!.id)!;
    expect(after.replayStatus).toBe('FAILED: Payload is missing required keys: customerId');
    expect(after.replayedAt).not.toBeNull();
    expect((await page('?source=alpha&unresolvedOnly=true')).data.map((l) => l.id)).not.toContain(letter!.id);
    expect((await page('?source=alpha&unresolvedOnly=true')).total).toBe(2);

    const again = await replay(letter!.id);
    expect(again.status).toBe(422);
    expect(again.body).toEqual({ error: 'Event has already been replayed' });
  });

  it('answers 422 for an unknown id and 400 without one', async () => {
    const unknown = await replay('00000000-0000-4000-8000-000000000000');
    expect(unknown.status).toBe(422);
    expect(unknown.body).toEqual({ error: 'Dead-letter event not found' });
    const missing = await http.post<{ error: string }>(`${base()}/dead-letters`, {}, { bearer: token });
    expect(missing.status).toBe(400);
    expect(missing.body).toEqual({ error: 'id is required' });
  });

  it('replays successfully (200, SUCCESS), and of 10 concurrent replays of one event exactly one runs', async () => {
    await publishDefinition(http, project, failingChatbot('downstream unavailable'));
    // Polls carry no published version but the configuration version of the polling service's
    // copy of the project: once that copy has the publish, the invocation service runs at
    // least that version.
    await eventually('the publish to reach the polling service', async () => {
      const [row] = await queryDatabase(
        system.database.url,
        `SELECT (SELECT config_version FROM gateway.projects WHERE id = $1) AS published,
                (SELECT config_version FROM polling.project_copies WHERE project_id = $1) AS held`,
        [project.projectId],
      );
      return row && row.held !== null && Number(row.held) >= Number(row.published) ? true : undefined;
    });
    const items = [1, 2].map((id) => ({ id: `g${id}`, event: 'e', customerId: `c${id}` }));
    const letters = await pollOnce('gamma', 'gamma', items, 2);
    expect(letters[0]!.failureReason).toBe('downstream unavailable');
    // A replay carries the version the gateway saw, so it runs this definition at once.
    await publishDefinition(http, project, reportingChatbot(endpoint.url));

    const [first, second] = letters;
    const ok = await replay(first!.id);
    expect(ok.status).toBe(200);
    expect(ok.body).toEqual({ success: true });
    expect((await page('?source=gamma')).data.find((l) => l.id === first!.id)!.replayStatus).toBe('SUCCESS');
    expect(endpoint.seen('gamma')).toEqual([first!.requestPayload]);

    const answers = await Promise.all(Array.from({ length: 10 }, () => replay(second!.id)));
    expect(answers.filter((answer) => answer.status === 200)).toHaveLength(1);
    const refused = answers.filter((answer) => answer.status === 422);
    expect(refused).toHaveLength(9);
    for (const answer of refused) expect(answer.body).toEqual({ error: 'Event has already been replayed' });
    expect(endpoint.seen('gamma')).toEqual([first!.requestPayload, second!.requestPayload]);
  });

  it('records failed automation runs (target FLOW, the original request) and serves them under /automations (extension)', async () => {
    const automation = await createPublishedProject(http, 'AUTOMATION', {
      schemaVersion: 1,
      workflow: {
        trigger: { externalEnabled: true, key: 'external_event', expectedPayload: { orderId: '' }, retry: { maxAttempts: 1, backoffSeconds: 1 } },
        start: 'boom',
        nodes: { boom: { type: 'fail', error: 'automation broke' } },
      },
    });
    const automationToken = (await issueToken(http, automation, ['automation:trigger'])).token;
    const path = `/v1/orgs/${automation.orgId}/automations/${automation.projectId}`;
    const accepted = await http.post(`${path}/trigger-async`, { event: 'order', payload: { orderId: 'o-1' } }, { bearer: automationToken });
    expect(accepted.status).toBe(202);
    const [letter] = await eventually('the automation dead letter', async () => {
      const found = await http.get<Page>(`${path}/dead-letters`, { bearer: automationToken });
      return found.body.total === 1 ? found.body.data : undefined;
    });
    expect(letter).toMatchObject({ targetType: 'FLOW', requestPayload: { event: 'order', payload: { orderId: 'o-1' } }, failureReason: 'automation broke', replayStatus: null });
    const replayed = await http.post<{ error: string }>(`${path}/dead-letters?id=${letter!.id}`, {}, { bearer: automationToken });
    expect(replayed.status).toBe(422);
    expect(replayed.body).toEqual({ error: 'automation broke' });
    const flowRoute = await http.get<{ error: string }>(`${base()}/dead-letters`, { bearer: automationToken });
    expect(flowRoute.status).toBe(401);
  });
});
