import { deadLetterService } from '@runline/dead-letter-service';
import { gatewayService } from '@runline/gateway-service';
import { invocationService } from '@runline/invocation-service';
import { pollingService } from '@runline/polling-service';
import { schedulerService } from '@runline/scheduler-service';
import { consoleJwt, HttpClient, queryDatabase, startTestSystem, type TestSystem } from '@runline/testing';
import { createPublishedProject, issueToken, publishDefinition, type ProjectFixture } from './gateway-fixtures.js';
import { eventually } from './support/lifecycle-support.js';
import { failingChatbot, PollingEndpoint, reportingChatbot } from './support/polling-endpoint.js';

type Trigger = Record<string, unknown> & { pollKey: string; lastPolledAt: string | null };
type DeadLetter = Record<string, unknown> & {
  id: string;
  source: string;
  targetType: string;
  replayedAt: string | null;
  replayStatus: string | null;
  requestPayload: Record<string, unknown>;
};
type Page = { data: DeadLetter[]; total: number; limit: number; offset: number };
type BulkAnswer = { matched: number; succeeded?: number; failed?: number; pending?: number; remaining?: number; error?: string };

/** Bulk replays take at most this many events per request here (the default is 100). */
const BULK_CAP = 5;

/** An automation whose workflow POSTs its payload to `<endpoint>/seen/<payload._pollKey>`. */
function reportingAutomation(endpointUrl: string, expectedPayload?: Record<string, unknown>): object {
  return {
    schemaVersion: 1,
    workflow: {
      trigger: { externalEnabled: true, key: 'external_event', ...(expectedPayload ? { expectedPayload } : {}) },
      start: 'report',
      nodes: {
        report: { type: 'http', method: 'POST', url: `${endpointUrl}/seen/{{ payload._pollKey }}`, body: 'payload', saveAs: 'reply', next: 'done' },
        done: { type: 'return', value: "{ 'ok': true }" },
      },
    },
  };
}

/**
 * The console's polling-trigger and dead-letter routes (DESIGN section 5) for chatbot and
 * automation projects, polled items of automation projects, and the bulk replay.
 */
describe('console: polling triggers, dead letters and bulk replay', () => {
  let system: TestSystem;
  let http: HttpClient;
  let endpoint: PollingEndpoint;
  let chatbot: ProjectFixture;
  let chatbotToken: string;
  const editor = consoleJwt('dl-editor');
  const viewer = consoleJwt('dl-viewer');
  const stranger = consoleJwt('dl-stranger');

  const projectPath = (project: ProjectFixture) => `/v1/orgs/${project.orgId}/projects/${project.projectId}`;
  const deadLetters = async (project: ProjectFixture, query = '', bearer = project.ownerJwt) =>
    (await http.get<Page>(`${projectPath(project)}/dead-letters${query}`, { bearer })).body;
  const bulk = (project: ProjectFixture, body: unknown, bearer = project.ownerJwt) => http.post<BulkAnswer>(`${projectPath(project)}/dead-letters/replay`, body, { bearer });
  const replayOne = (project: ProjectFixture, id: string, bearer = project.ownerJwt) =>
    http.post<{ success?: boolean; error?: string }>(`${projectPath(project)}/dead-letters/${id}/replay`, {}, { bearer });
  const setEveryMatch = async (project: ProjectFixture) => {
    const settings = await http.patch(`${projectPath(project)}/api-settings`, { defaultEnrollmentPolicy: 'EVERY_MATCH' }, { bearer: project.ownerJwt });
    expect(settings.status).toBe(200);
  };
  const addEditor = async (project: ProjectFixture) => {
    const added = await http.post(`/v1/orgs/${project.orgId}/members`, { userId: 'dl-editor', role: 'EDITOR' }, { bearer: project.ownerJwt });
    expect(added.status).toBe(201);
  };
  const runsOf = (projectId: string) =>
    queryDatabase(
      system.database.url,
      `SELECT target_type, document->>'status' AS status, document->>'triggerSource' AS "triggerSource" FROM invocation.invocation_views WHERE project_id = $1`,
      [projectId],
    );

  /** Registers a trigger through the console whose one poll answers `items`; waits for `expected` dead letters of `source`. */
  async function pollOnce(project: ProjectFixture, pollKey: string, source: string, items: object[], expected: number): Promise<DeadLetter[]> {
    const url = endpoint.script(`/api/${pollKey}`, [{ json: items }]);
    const created = await http.post(`${projectPath(project)}/polling-triggers`, { source, pollKey, pollEndpoint: url, intervalMs: 3_600_000 }, { bearer: project.ownerJwt });
    expect(created.status).toBe(201);
    return eventually(`${expected} dead letters of ${source}`, async () => {
      const found = await deadLetters(project, `?source=${source}`);
      return found.total === expected && found.data.length === expected ? found.data : undefined;
    });
  }

  beforeAll(async () => {
    system = await startTestSystem([gatewayService, invocationService, schedulerService, pollingService, deadLetterService], {
      environment: { OUTBOUND_ALLOWED_CIDRS: '127.0.0.0/8', ACCESS_CACHE_TTL_MS: '0', DEAD_LETTER_BULK_REPLAY_MAX_EVENTS: String(BULK_CAP) },
    });
    http = new HttpClient(system.url('gateway'));
    endpoint = await PollingEndpoint.start();
    chatbot = await createPublishedProject(http, 'CHATBOT', reportingChatbot(endpoint.url));
    await setEveryMatch(chatbot);
    await http.post(`/v1/orgs/${chatbot.orgId}/members`, { userId: 'dl-editor', role: 'EDITOR' }, { bearer: chatbot.ownerJwt });
    await http.post(`/v1/orgs/${chatbot.orgId}/members`, { userId: 'dl-viewer', role: 'VIEWER' }, { bearer: chatbot.ownerJwt });
    chatbotToken = (await issueToken(http, chatbot, ['flow:trigger'])).token;
  });
  afterAll(async () => {
    await system?.stop();
    await endpoint?.close();
  });

  describe('polling triggers (chatbot project)', () => {
    it('registers, lists, reads one and deletes with the answers of the token route', async () => {
      const triggers = `${projectPath(chatbot)}/polling-triggers`;
      const url = endpoint.script('/api/console-one', [{ json: [] }]);
      const created = await http.post<{ data: Trigger }>(triggers, { source: 'crm', pollKey: 'console-one', pollEndpoint: url, authHeader: 'Bearer poll-secret' }, { bearer: editor });
      expect(created.status).toBe(201);
      const viaToken = await http.post<{ data: Trigger }>(
        `/v1/orgs/${chatbot.orgId}/flows/${chatbot.projectId}/polling`,
        { source: 'crm', pollKey: 'token-one', pollEndpoint: url },
        { bearer: chatbotToken },
      );
      expect(viaToken.status).toBe(201);
      expect(Object.keys(created.body.data).sort()).toEqual(Object.keys(viaToken.body.data).sort());
      expect(created.body.data).toMatchObject({ source: 'crm', pollKey: 'console-one', dedupeField: 'id', pollEndpoint: url, intervalMs: 60000, lastSeenValue: null });

      // After the first polls (due at once) the reads are stable: console and token routes agree.
      await eventually('both first polls', async () => {
        const listed = (await http.get<{ data: Trigger[] }>(triggers, { bearer: viewer })).body.data;
        return listed.length === 2 && listed.every((trigger) => trigger.lastPolledAt !== null) ? true : undefined;
      });
      const tokenList = await http.get(`/v1/orgs/${chatbot.orgId}/flows/${chatbot.projectId}/polling`, { bearer: chatbotToken });
      const consoleList = await http.get<{ data: Trigger[] }>(triggers, { bearer: viewer });
      expect(consoleList).toMatchObject({ status: 200, body: tokenList.body });
      expect(consoleList.body.data.find((trigger) => trigger.pollKey === 'console-one')!.authHeader).toBe('Bearer poll-secret');
      const tokenOne = await http.get(`/v1/orgs/${chatbot.orgId}/flows/${chatbot.projectId}/polling?pollKey=console-one`, { bearer: chatbotToken });
      expect((await http.get(`${triggers}/console-one`, { bearer: viewer })).body).toEqual(tokenOne.body);
      expect((await http.get(`${triggers}?pollKey=console-one`, { bearer: viewer })).body).toEqual(tokenOne.body);
      expect((await http.get(`${triggers}/nobody`, { bearer: viewer })).body).toEqual({ data: [] });

      const removed = await http.delete(`${triggers}/console-one`, { bearer: editor });
      expect(removed).toMatchObject({ status: 200, body: { success: true } });
      const again = await http.delete(`${triggers}/console-one`, { bearer: editor });
      expect(again).toMatchObject({ status: 404, body: { error: 'Polling state not found' } });
      expect((await http.delete(`${triggers}/token-one`, { bearer: chatbot.ownerJwt })).status).toBe(200);
    });

    it.each([
      [{ pollKey: 'k', pollEndpoint: 'http://127.0.0.1:9/x' }, 'source is required'],
      [{ source: 's', pollEndpoint: 'http://127.0.0.1:9/x' }, 'pollKey is required'],
      [{ source: 's', pollKey: 'k' }, 'pollEndpoint is required'],
      [{ source: 's', pollKey: 'k', pollEndpoint: 'http://127.0.0.1:9/x', intervalMs: 10 }, 'intervalMs must be an integer between 1000 and 86400000'],
      [{ source: 's', pollKey: 'k', pollEndpoint: 'ftp://127.0.0.1/x' }, 'pollEndpoint must be an http or https URL'],
    ])('refuses %j with 400 %s, as the token route does', async (body, message) => {
      const answer = await http.post(`${projectPath(chatbot)}/polling-triggers`, body, { bearer: chatbot.ownerJwt });
      expect(answer).toMatchObject({ status: 400, body: { error: message } });
      const viaToken = await http.post(`/v1/orgs/${chatbot.orgId}/flows/${chatbot.projectId}/polling`, body, { bearer: chatbotToken });
      expect(viaToken).toMatchObject({ status: 400, body: { error: message } });
    });
  });

  describe('access', () => {
    const editAccess = { status: 403, body: { error: 'This action requires edit access to the project' } };
    const valid = { source: 's', pollKey: 'access', pollEndpoint: 'http://127.0.0.1:9/x' };
    const someId = '00000000-0000-4000-8000-000000000000';
    const changes: Array<[string, string, () => string, unknown]> = [
      ['POST', 'polling-triggers', () => `${projectPath(chatbot)}/polling-triggers`, valid],
      ['DELETE', 'polling-triggers/{pollKey}', () => `${projectPath(chatbot)}/polling-triggers/access`, undefined],
      ['POST', 'dead-letters/{id}/replay', () => `${projectPath(chatbot)}/dead-letters/${someId}/replay`, {}],
      ['POST', 'dead-letters/replay', () => `${projectPath(chatbot)}/dead-letters/replay`, { filter: {}, dryRun: true }],
    ];
    const reads: Array<[string, () => string]> = [
      ['polling-triggers', () => `${projectPath(chatbot)}/polling-triggers`],
      ['polling-triggers/{pollKey}', () => `${projectPath(chatbot)}/polling-triggers/access`],
      ['dead-letters', () => `${projectPath(chatbot)}/dead-letters`],
    ];
    const send = (method: string, path: string, body: unknown, bearer?: string) => http.request(method, path, { ...(body === undefined ? {} : { body }), ...(bearer ? { bearer } : {}) });

    it.each(changes)('%s …/%s: 403 for a VIEWER, 404 for a non-member, 401 without a JWT and for an API token', async (method, _route, path, body) => {
      expect(await send(method, path(), body, viewer)).toMatchObject(editAccess);
      expect(await send(method, path(), body, stranger)).toMatchObject({ status: 404, body: { error: 'Organization not found' } });
      expect(await send(method, path(), body)).toMatchObject({ status: 401, body: { error: 'Missing console token' } });
      expect(await send(method, path(), body, chatbotToken)).toMatchObject({ status: 401, body: { error: 'Invalid or expired console token' } });
    });

    it.each(reads)('GET …/%s: 200 for a VIEWER, 404 for a non-member, 401 without a JWT and for an API token', async (_route, path) => {
      expect((await http.get(path(), { bearer: viewer })).status).toBe(200);
      expect(await http.get(path(), { bearer: stranger })).toMatchObject({ status: 404, body: { error: 'Organization not found' } });
      expect(await http.get(path())).toMatchObject({ status: 401, body: { error: 'Missing console token' } });
      expect(await http.get(path(), { bearer: chatbotToken })).toMatchObject({ status: 401, body: { error: 'Invalid or expired console token' } });
    });

    it("answers 404 for a project of another organization, even to that organization's owner", async () => {
      const other = await createPublishedProject(http, 'CHATBOT');
      const path = `/v1/orgs/${chatbot.orgId}/projects/${other.projectId}/dead-letters`;
      expect(await http.get(path, { bearer: chatbot.ownerJwt })).toMatchObject({ status: 404, body: { error: 'Project not found' } });
      expect(await http.get(path, { bearer: other.ownerJwt })).toMatchObject({ status: 404, body: { error: 'Organization not found' } });
    });
  });

  describe('dead letters (chatbot project)', () => {
    let letters: DeadLetter[];

    beforeAll(async () => {
      // Items without customerId fail the chatbot flow's trigger checks.
      letters = await pollOnce(chatbot, 'alpha', 'alpha', [1, 2, 3].map((id) => ({ id, event: 'e' })), 3);
    });

    it('lists with the answers of the token route (query, paging, shape)', async () => {
      for (const query of ['', '?source=alpha', '?limit=2&offset=1', '?unresolvedOnly=true', '?limit=500']) {
        const viaToken = await http.get(`/v1/orgs/${chatbot.orgId}/flows/${chatbot.projectId}/dead-letters${query}`, { bearer: chatbotToken });
        const viaConsole = await http.get(`${projectPath(chatbot)}/dead-letters${query}`, { bearer: viewer });
        expect(viaConsole).toMatchObject({ status: 200, body: viaToken.body });
      }
      expect(letters[0]).toMatchObject({ source: 'alpha', targetType: 'polling', triggerKey: 'alpha', replayStatus: null });
      const bad = await http.get(`${projectPath(chatbot)}/dead-letters?limit=abc`, { bearer: viewer });
      expect(bad).toMatchObject({ status: 400, body: { error: 'limit must be an integer' } });
    });

    it('replays one event once: 422 with the reason, then 422 Event has already been replayed; 422 for an unknown id', async () => {
      const [letter] = letters;
      const failed = await replayOne(chatbot, letter!.id, editor);
      expect(failed).toMatchObject({ status: 422, body: { error: 'Payload is missing required keys: customerId' } });
      expect((await replayOne(chatbot, letter!.id, editor)).body).toEqual({ error: 'Event has already been replayed' });
      const viaToken = await http.post(`/v1/orgs/${chatbot.orgId}/flows/${chatbot.projectId}/dead-letters?id=${letter!.id}`, {}, { bearer: chatbotToken });
      expect(viaToken).toMatchObject({ status: 422, body: { error: 'Event has already been replayed' } });
      const after = (await deadLetters(chatbot, '?source=alpha')).data.find((candidate) => candidate.id === letter!.id)!;
      expect(after.replayStatus).toBe('FAILED: Payload is missing required keys: customerId');
      expect(await replayOne(chatbot, '00000000-0000-4000-8000-000000000000')).toMatchObject({ status: 422, body: { error: 'Dead-letter event not found' } });
      expect(await replayOne(chatbot, 'not-a-uuid')).toMatchObject({ status: 422, body: { error: 'Dead-letter event not found' } });
    });
  });

  describe('automation projects', () => {
    let automation: ProjectFixture;
    let automationToken: string;

    beforeAll(async () => {
      automation = await createPublishedProject(http, 'AUTOMATION', reportingAutomation(endpoint.url, { orderId: '' }));
      await setEveryMatch(automation);
      automationToken = (await issueToken(http, automation, ['automation:trigger'])).token;
    });

    it('runs each polled item as an automation run with the item as its payload; a failed item is one polling dead letter', async () => {
      const [letter] = await pollOnce(automation, 'orders', 'shop', [{ id: 1, orderId: 'o-1' }, { id: 2 }], 1);
      expect(endpoint.seen('orders')).toEqual([{ id: 1, orderId: 'o-1', source: 'shop', _pollKey: 'orders' }]);
      const runs = await runsOf(automation.projectId);
      expect(runs.map((run) => `${run.target_type} ${run.triggerSource} ${run.status}`).sort()).toEqual(['AUTOMATION POLLING FAILED', 'AUTOMATION POLLING SUCCEEDED']);
      expect(letter).toMatchObject({
        source: 'shop',
        targetType: 'polling',
        triggerKey: 'orders',
        requestPayload: { id: 2, source: 'shop', _pollKey: 'orders' },
        failureReason: 'Payload is missing required keys: orderId',
        attemptCount: 1,
        replayStatus: null,
      });
      // The token routes reach automation dead letters only under /automations (the extension).
      const viaToken = await http.get(`/v1/orgs/${automation.orgId}/automations/${automation.projectId}/dead-letters`, { bearer: automationToken });
      expect(await http.get(`${projectPath(automation)}/dead-letters`, { bearer: automation.ownerJwt })).toMatchObject({ status: 200, body: viaToken.body });

      const triggers = (await http.get<{ data: Trigger[] }>(`${projectPath(automation)}/polling-triggers`, { bearer: automation.ownerJwt })).body.data;
      expect(triggers.map((trigger) => trigger.pollKey)).toEqual(['orders']);
      // The token polling routes stay chatbot-only.
      expect(await http.get(`/v1/orgs/${automation.orgId}/flows/${automation.projectId}/polling`, { bearer: automationToken })).toMatchObject({
        status: 400,
        body: { error: 'Automation projects must use the automation trigger API' },
      });

      // Replayed through the console once the definition no longer needs orderId: the workflow
      // gets the item as its payload again, on the definition published just before.
      await publishDefinition(http, automation, reportingAutomation(endpoint.url));
      expect(await replayOne(automation, letter!.id)).toMatchObject({ status: 200, body: { success: true } });
      expect(endpoint.seen('orders')).toEqual([
        { id: 1, orderId: 'o-1', source: 'shop', _pollKey: 'orders' },
        { id: 2, source: 'shop', _pollKey: 'orders' },
      ]);
      expect((await deadLetters(automation)).data[0]!.replayStatus).toBe('SUCCESS');
      expect((await replayOne(automation, letter!.id)).body).toEqual({ error: 'Event has already been replayed' });
      expect((await http.delete(`${projectPath(automation)}/polling-triggers/orders`, { bearer: automation.ownerJwt })).body).toEqual({ success: true });
    });

    it('lists an automation run that failed all its retries as a FLOW dead letter, its secrets redacted as on the token route', async () => {
      const failing = await createPublishedProject(http, 'AUTOMATION', {
        schemaVersion: 1,
        workflow: {
          trigger: { externalEnabled: true, key: 'external_event', expectedPayload: { orderId: '' }, retry: { maxAttempts: 2, backoffSeconds: 1 } },
          start: 'boom',
          nodes: { boom: { type: 'fail', error: 'automation broke' } },
        },
      });
      const token = (await issueToken(http, failing, ['automation:trigger'])).token;
      const accepted = await http.post(
        `/v1/orgs/${failing.orgId}/automations/${failing.projectId}/trigger-async`,
        { event: 'order', payload: { orderId: 'o-9', apiKey: 'sk-very-secret' } },
        { bearer: token },
      );
      expect(accepted.status).toBe(202);
      const [letter] = await eventually('the FLOW dead letter', async () => {
        const found = await deadLetters(failing);
        return found.total === 1 ? found.data : undefined;
      }, 20_000);
      expect(letter).toMatchObject({
        targetType: 'FLOW',
        attemptCount: 2,
        failureReason: 'automation broke',
        requestPayload: { event: 'order', payload: { orderId: 'o-9', apiKey: '[REDACTED]' } },
      });
      expect(JSON.stringify(letter)).not.toContain('sk-very-secret');
      const viaToken = await http.get(`/v1/orgs/${failing.orgId}/automations/${failing.projectId}/dead-letters`, { bearer: token });
      expect((await deadLetters(failing))).toEqual(viaToken.body);
      expect(await replayOne(failing, letter!.id)).toMatchObject({ status: 422, body: { error: 'automation broke' } });
    });
  });

  describe('bulk replay', () => {
    let project: ProjectFixture;

    beforeAll(async () => {
      project = await createPublishedProject(http, 'CHATBOT', failingChatbot('downstream unavailable'));
      await setEveryMatch(project);
      await addEditor(project);
      // 6 items that pass the checks but whose flow fails, 3 that fail the checks.
      await pollOnce(project, 'bulk-a', 'bulk-a', [1, 2, 3, 4, 5, 6].map((id) => ({ id: `a${id}`, event: 'e', customerId: `c${id}` })), 6);
      await pollOnce(project, 'bulk-b', 'bulk-b', [1, 2, 3].map((id) => ({ id: `b${id}`, event: 'e' })), 3);
      await publishDefinition(http, project, reportingChatbot(endpoint.url));
    });

    it.each([
      [{}, 'filter is required (an object; {} matches every event not yet replayed)'],
      [{ filter: [] }, 'filter must be an object'],
      [{ filter: 'all' }, 'filter must be an object'],
      [{ filter: {}, limit: 3 }, 'Unknown field: limit'],
      [{ filter: { status: 'FAILED' } }, 'Unknown field: filter.status'],
      [{ filter: { source: '' } }, 'filter.source must be a non-empty string'],
      [{ filter: { source: 7 } }, 'filter.source must be a non-empty string'],
      [{ filter: { targetType: 'AUTOMATION' } }, 'filter.targetType must be one of: polling, FLOW'],
      [{ filter: { from: 'yesterday' } }, 'filter.from must be an ISO 8601 date-time'],
      [{ filter: { to: '2025-13-01T00:00:00Z' } }, 'filter.to must be an ISO 8601 date-time'],
      [{ filter: { from: '2025-02-01T00:00:00Z', to: '2025-01-01T00:00:00Z' } }, 'filter.from must not be after filter.to'],
      [{ filter: {}, dryRun: 'yes' }, 'dryRun must be true or false'],
    ])('refuses %j with 400 %s', async (body, message) => {
      expect(await bulk(project, body)).toMatchObject({ status: 400, body: { error: message } });
    });

    it('counts the matching unreplayed events on a dry run and replays nothing', async () => {
      const hour = 3_600_000;
      const cases: Array<[Record<string, unknown>, number]> = [
        [{}, 9],
        [{ source: 'bulk-a' }, 6],
        [{ source: 'nobody' }, 0],
        [{ targetType: 'polling' }, 9],
        [{ targetType: 'FLOW' }, 0],
        [{ from: new Date(Date.now() - hour).toISOString(), to: new Date(Date.now() + hour).toISOString() }, 9],
        [{ from: new Date(Date.now() + hour).toISOString() }, 0],
        [{ to: new Date(Date.now() - hour).toISOString() }, 0],
      ];
      for (const [filter, matched] of cases) expect(await bulk(project, { filter, dryRun: true }, editor)).toMatchObject({ status: 200, body: { matched } });
      expect((await bulk(project, { filter: {}, dryRun: true })).body).toEqual({ matched: 9 });
      expect((await deadLetters(project, '?unresolvedOnly=true')).total).toBe(9);
    });

    it('replays the matching events once each and answers the figures, at most the cap per request', async () => {
      const b = await bulk(project, { filter: { source: 'bulk-b', targetType: 'polling' } });
      expect(b).toMatchObject({ status: 200, body: { matched: 3, succeeded: 0, failed: 3, pending: 0, remaining: 0 } });
      const statuses = (await deadLetters(project, '?source=bulk-b')).data.map((letter) => letter.replayStatus);
      expect(statuses).toEqual(Array(3).fill('FAILED: Payload is missing required keys: customerId'));

      const first = await bulk(project, { filter: {} });
      expect(first).toMatchObject({ status: 200, body: { matched: BULK_CAP, succeeded: BULK_CAP, failed: 0, pending: 0, remaining: 6 - BULK_CAP } });
      const second = await bulk(project, { filter: {} });
      expect(second.body).toEqual({ matched: 6 - BULK_CAP, succeeded: 6 - BULK_CAP, failed: 0, pending: 0, remaining: 0 });
      expect((await bulk(project, { filter: {} })).body).toEqual({ matched: 0, succeeded: 0, failed: 0, pending: 0, remaining: 0 });
      expect((await bulk(project, { filter: {}, dryRun: true })).body).toEqual({ matched: 0 });

      const letters = (await deadLetters(project)).data;
      expect(letters.every((letter) => letter.replayedAt !== null && letter.replayStatus !== null)).toBe(true);
      expect(endpoint.seen('bulk-a')).toHaveLength(6);
      const replayed = letters.find((letter) => letter.source === 'bulk-a')!;
      expect((await replayOne(project, replayed.id)).body).toEqual({ error: 'Event has already been replayed' });
    });

    it('replays each event exactly once when two bulk replays and a single replay overlap', async () => {
      const overlap = await createPublishedProject(http, 'CHATBOT', failingChatbot('still down'));
      await setEveryMatch(overlap);
      await addEditor(overlap);
      const letters = await pollOnce(overlap, 'overlap', 'overlap', Array.from({ length: 8 }, (_, index) => ({ id: `o${index}`, event: 'e', customerId: `c${index}` })), 8);
      expect((await runsOf(overlap.projectId)).filter((run) => run.triggerSource === 'REPLAY')).toHaveLength(0);

      const single = letters[3]!;
      const [one, two, alone] = await Promise.all([bulk(overlap, { filter: {} }), bulk(overlap, { filter: {} }, editor), replayOne(overlap, single.id)]);
      expect(one.status).toBe(200);
      expect(two.status).toBe(200);
      expect(alone.status).toBe(422);
      const singleRan = (alone.body as { error: string }).error === 'still down';
      if (!singleRan) expect(alone.body).toEqual({ error: 'Event has already been replayed' });
      expect(one.body.matched + two.body.matched + (singleRan ? 1 : 0)).toBe(8);
      for (const answer of [one.body, two.body]) expect(answer).toMatchObject({ succeeded: 0, failed: answer.matched, pending: 0, remaining: 0 });

      const after = (await deadLetters(overlap)).data;
      expect(after.map((letter) => letter.replayStatus)).toEqual(Array(8).fill('FAILED: still down'));
      const replays = (await runsOf(overlap.projectId)).filter((run) => run.triggerSource === 'REPLAY');
      expect(replays).toHaveLength(8);
    });
  });
});
