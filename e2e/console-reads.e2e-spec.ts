import { createRunlineClient } from '@runline/api-client';
import { gatewayService } from '@runline/gateway-service';
import { invocationService } from '@runline/invocation-service';
import { consoleJwt, HttpClient, startTestSystem, type TestSystem } from '@runline/testing';
import { createProject, createPublishedProject, issueToken, VALID_AUTOMATION_DEFINITION, VALID_CHATBOT_DEFINITION, type ProjectFixture } from './gateway-fixtures.js';
import { runPath, type Json } from './support/runs-support.js';

const ADMIN = consoleJwt('reads-admin', { roles: ['platform-admin'] });
const MISSING_JWT = { status: 401, body: { error: 'Missing console token' } };
const INVALID_JWT = { status: 401, body: { error: 'Invalid or expired console token' } };
const ORG_NOT_FOUND = { status: 404, body: { error: 'Organization not found' } };
const PROJECT_NOT_FOUND = { status: 404, body: { error: 'Project not found' } };
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const FLOW_BODY = { event: 'order.created', customerId: 'c-1' };

/** The console's reads: GET /v1/orgs, …/plan, …/projects, …/projects/{id}, …/definition. */
describe('console reads', () => {
  let system: TestSystem;
  let http: HttpClient;
  let project: ProjectFixture;
  let apiToken: string;
  const viewer = consoleJwt('reads-viewer');
  const stranger = consoleJwt('reads-stranger');
  const projectPath = (p: ProjectFixture = project) => `/v1/orgs/${p.orgId}/projects/${p.projectId}`;

  beforeAll(async () => {
    system = await startTestSystem([gatewayService, invocationService]);
    http = new HttpClient(system.url('gateway'));
    project = await createPublishedProject(http, 'CHATBOT');
    expect((await http.post(`/v1/orgs/${project.orgId}/members`, { userId: 'reads-viewer', role: 'VIEWER' }, { bearer: project.ownerJwt })).status).toBe(201);
    apiToken = (await issueToken(http, project, ['flow:trigger', 'bot:invoke'])).token;
  });
  afterAll(() => system?.stop());

  describe('authentication (every read)', () => {
    const routes: Array<[string, () => string]> = [
      ['GET /v1/orgs', () => '/v1/orgs'],
      ['GET plan', () => `/v1/orgs/${project.orgId}/plan`],
      ['GET projects', () => `/v1/orgs/${project.orgId}/projects`],
      ['GET project', () => projectPath()],
      ['GET definition', () => `${projectPath()}/definition?stage=draft`],
    ];

    it.each(routes)('%s: 401 without a JWT, 401 with an API token', async (_name, path) => {
      expect(await http.get(path())).toMatchObject(MISSING_JWT);
      expect(await http.get(path(), { bearer: apiToken })).toMatchObject(INVALID_JWT);
    });
  });

  describe('GET /v1/orgs', () => {
    it("lists the caller's organizations with the caller's role in each, and nothing else", async () => {
      const user = consoleJwt('reads-two-orgs');
      const own = await http.post<{ orgId: string }>('/v1/orgs', { name: 'Mine' }, { bearer: user });
      expect((await http.post(`/v1/orgs/${project.orgId}/members`, { userId: 'reads-two-orgs', role: 'EDITOR' }, { bearer: project.ownerJwt })).status).toBe(201);
      const answer = await http.get<{ data: Json[] }>('/v1/orgs', { bearer: user });
      expect(answer.status).toBe(200);
      expect(answer.body.data).toHaveLength(2);
      expect(answer.body.data).toEqual(
        expect.arrayContaining([
          { orgId: own.body.orgId, name: 'Mine', role: 'OWNER' },
          { orgId: project.orgId, name: expect.any(String), role: 'EDITOR' },
        ]),
      );
      expect(await http.get('/v1/orgs', { bearer: viewer })).toMatchObject({ status: 200, body: { data: [{ orgId: project.orgId, role: 'VIEWER' }] } });
      expect(await http.get('/v1/orgs', { bearer: stranger })).toMatchObject({ status: 200, body: { data: [] } });
    });
  });

  describe('GET /v1/orgs/{orgId}/plan', () => {
    const flow = (p: ProjectFixture, token: string, body: Json = FLOW_BODY) => http.post<Json>(runPath('flowTrigger', p), body, { bearer: token });

    it('shows the plan and the usage the quota check counts, to any member; a 429 reports the same figures', async () => {
      const fresh = await createPublishedProject(http, 'CHATBOT');
      const token = (await issueToken(http, fresh, ['flow:trigger'])).token;
      const plan = () => http.get<Json>(`/v1/orgs/${fresh.orgId}/plan`, { bearer: fresh.ownerJwt });

      const now = new Date();
      const firstOfMonth = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1)).toISOString();
      expect(await plan()).toMatchObject({
        status: 200,
        body: { monthlyQuota: null, rateLimitPerMinute: null, rateLimitWindowMs: null, renewalDay: null, periodStart: firstOfMonth, used: 0 },
      });

      // Counted without a quota too; a dry run is not.
      expect((await flow(fresh, token)).status).toBe(200);
      expect((await flow(fresh, token, { ...FLOW_BODY, dryRun: true })).status).toBe(200);
      expect((await plan()).body).toMatchObject({ used: 1 });

      // A renewal day moves the period; a quota makes the counter the quota check's own.
      const renewalDay = Math.min(now.getUTCDate(), 28);
      const periodStart = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - (now.getUTCDate() >= renewalDay ? 0 : 1), renewalDay)).toISOString();
      const set = await http.put(`/v1/orgs/${fresh.orgId}/plan`, { monthlyQuota: 2, rateLimitPerMinute: 50, rateLimitWindowMs: 30000, renewalDay }, { bearer: ADMIN });
      expect(set.status).toBe(200);
      expect(await plan()).toMatchObject({ status: 200, body: { monthlyQuota: 2, rateLimitPerMinute: 50, rateLimitWindowMs: 30000, renewalDay, periodStart, used: 1 } });
      expect((await flow(fresh, token)).status).toBe(200);
      const refused = await flow(fresh, token);
      expect(refused).toMatchObject({ status: 429, body: { error: 'Monthly API call quota exceeded', quota: { limit: 2, used: 2 } } });
      const shown = (await plan()).body;
      expect(shown).toEqual({ monthlyQuota: 2, rateLimitPerMinute: 50, rateLimitWindowMs: 30000, renewalDay, periodStart, used: 2 });
      expect(shown.periodStart).toBe(refused.headers.get('x-quota-period-start'));
      expect(String(shown.used)).toBe(refused.headers.get('x-quota-used'));

      // Any member reads it.
      expect((await http.post(`/v1/orgs/${fresh.orgId}/members`, { userId: 'reads-plan-viewer', role: 'VIEWER' }, { bearer: fresh.ownerJwt })).status).toBe(201);
      expect(await http.get(`/v1/orgs/${fresh.orgId}/plan`, { bearer: consoleJwt('reads-plan-viewer') })).toMatchObject({ status: 200, body: { used: 2 } });
    });

    it('404 for a non-member (a platform-admin included) and an unknown organization', async () => {
      expect(await http.get(`/v1/orgs/${project.orgId}/plan`, { bearer: stranger })).toMatchObject(ORG_NOT_FOUND);
      expect(await http.get(`/v1/orgs/${project.orgId}/plan`, { bearer: ADMIN })).toMatchObject(ORG_NOT_FOUND);
      expect(await http.get('/v1/orgs/00000000-0000-4000-8000-000000000000/plan', { bearer: project.ownerJwt })).toMatchObject(ORG_NOT_FOUND);
      expect(await http.get('/v1/orgs/not-a-uuid/plan', { bearer: project.ownerJwt })).toMatchObject(ORG_NOT_FOUND);
    });
  });

  describe('GET /v1/orgs/{orgId}/projects', () => {
    it('lists the live projects, oldest first; a deleted one is gone', async () => {
      const org = await createProject(http, 'CHATBOT');
      const base = `/v1/orgs/${org.orgId}/projects`;
      const second = await http.post<{ projectId: string }>(base, { name: 'Second', type: 'AUTOMATION' }, { bearer: org.ownerJwt });
      const third = await http.post<{ projectId: string }>(base, { name: 'Third', type: 'AUTOMATION' }, { bearer: org.ownerJwt });
      const published = await http.put(`${base}/${second.body.projectId}/definition`, { definition: VALID_AUTOMATION_DEFINITION }, { bearer: org.ownerJwt });
      expect(published.status).toBe(200);
      expect((await http.post(`${base}/${second.body.projectId}/publish`, undefined, { bearer: org.ownerJwt })).status).toBe(200);
      expect((await http.delete(`${base}/${third.body.projectId}`, { bearer: org.ownerJwt })).status).toBe(204);

      const listed = await http.get<{ data: Json[] }>(base, { bearer: org.ownerJwt });
      expect(listed.status).toBe(200);
      expect(listed.body.data).toEqual([
        { projectId: org.projectId, name: expect.any(String), type: 'CHATBOT', publishedVersion: null, createdAt: expect.stringMatching(ISO) },
        { projectId: second.body.projectId, name: 'Second', type: 'AUTOMATION', publishedVersion: 1, createdAt: expect.stringMatching(ISO) },
      ]);
    });

    it('any member reads it; 404 for a non-member', async () => {
      expect(await http.get(`/v1/orgs/${project.orgId}/projects`, { bearer: viewer })).toMatchObject({ status: 200, body: { data: [{ projectId: project.projectId }] } });
      expect(await http.get(`/v1/orgs/${project.orgId}/projects`, { bearer: stranger })).toMatchObject(ORG_NOT_FOUND);
    });
  });

  describe('GET /v1/orgs/{orgId}/projects/{projectId} and its definition (through the typed client)', () => {
    const client = (jwt: string) => createRunlineClient(http.baseUrl, jwt);
    const ids = (p: ProjectFixture = project) => ({ orgId: p.orgId, projectId: p.projectId });
    /** The client's answer as the other tests read HttpClient's: status, and the body (data or error). */
    const answer = async <T>(call: Promise<{ data?: T; error?: unknown; response: Response }>) => {
      const { data, error, response } = await call;
      return { status: response.status, body: (data ?? error) as T };
    };
    const read = (p: ProjectFixture, jwt = p.ownerJwt) => answer(client(jwt).GET('/v1/orgs/{orgId}/projects/{projectId}', { params: { path: ids(p) } }));
    const definition = (p: ProjectFixture, stage: 'draft' | 'published', jwt = p.ownerJwt) =>
      answer(client(jwt).GET('/v1/orgs/{orgId}/projects/{projectId}/definition', { params: { path: ids(p), query: { stage } } }));

    it('draftVersion grows with every saved draft; publish answers the draft version the read then shows', async () => {
      const fresh = await createProject(http, 'CHATBOT');
      const owner = client(fresh.ownerJwt);
      const save = (body: object) => answer(owner.PUT('/v1/orgs/{orgId}/projects/{projectId}/definition', { params: { path: ids(fresh) }, body: { definition: body as Record<string, never> } }));
      const publish = () => answer(owner.POST('/v1/orgs/{orgId}/projects/{projectId}/publish', { params: { path: ids(fresh) } }));

      const first = await read(fresh);
      expect(first.status).toBe(200);
      expect(first.body).toEqual({ projectId: fresh.projectId, name: expect.any(String), type: 'CHATBOT', publishedVersion: null, draftVersion: null, createdAt: expect.stringMatching(ISO) });
      // Nothing saved or published yet: not an error, an empty stage.
      expect(await definition(fresh, 'draft')).toMatchObject({ status: 200, body: { version: null, definition: null } });
      expect(await definition(fresh, 'published')).toMatchObject({ status: 200, body: { version: null, definition: null } });

      expect(await save(VALID_CHATBOT_DEFINITION)).toMatchObject({ status: 200, body: { draftVersion: 1, publishedVersion: null } });
      const changed = structuredClone(VALID_CHATBOT_DEFINITION);
      changed.flow.nodes.n1.text = 'Changed {{ payload.orderId }}';
      expect(await save(changed)).toMatchObject({ status: 200, body: { draftVersion: 2 } });
      expect((await read(fresh)).body).toMatchObject({ draftVersion: 2, publishedVersion: null });

      expect(await publish()).toEqual({ status: 200, body: { publishedVersion: 2 } });
      expect((await read(fresh)).body).toMatchObject({ draftVersion: 2, publishedVersion: 2 });
      expect(await save(VALID_CHATBOT_DEFINITION)).toMatchObject({ status: 200, body: { draftVersion: 3, publishedVersion: 2 } });

      // Each stage as saved, keys in the order they were written.
      const draft = await definition(fresh, 'draft');
      expect(draft.body).toEqual({ version: 3, definition: VALID_CHATBOT_DEFINITION });
      expect(JSON.stringify(draft.body.definition)).toBe(JSON.stringify(VALID_CHATBOT_DEFINITION));
      expect((await definition(fresh, 'published')).body).toEqual({ version: 2, definition: changed });

      expect(await publish()).toEqual({ status: 200, body: { publishedVersion: 3 } });
      expect((await read(fresh)).body).toMatchObject({ draftVersion: 3, publishedVersion: 3 });
      expect((await definition(fresh, 'published')).body).toEqual({ version: 3, definition: VALID_CHATBOT_DEFINITION });
    });

    it('400 for a missing or unknown stage', async () => {
      // Raw query strings on purpose: the typed client cannot send what the document forbids.
      for (const query of ['', '?stage=', '?stage=latest', '?stage=draft&stage=published']) {
        expect(await http.get(`${projectPath()}/definition${query}`, { bearer: viewer })).toMatchObject({ status: 400, body: { error: 'stage must be one of: draft, published' } });
      }
    });

    it("any member reads them; 404 for a non-member, another organization's project, an unknown or deleted project", async () => {
      expect(await read(project, viewer)).toMatchObject({ status: 200, body: { projectId: project.projectId, publishedVersion: 1, draftVersion: 1 } });
      expect(await definition(project, 'published', viewer)).toMatchObject({ status: 200, body: { version: 1 } });
      expect(await read(project, stranger)).toMatchObject(ORG_NOT_FOUND);
      expect(await definition(project, 'draft', stranger)).toMatchObject(ORG_NOT_FOUND);
      const other = await createProject(http, 'CHATBOT');
      const foreign: ProjectFixture = { ...project, projectId: other.projectId };
      expect(await read(foreign)).toMatchObject(PROJECT_NOT_FOUND);
      expect(await definition(foreign, 'draft')).toMatchObject(PROJECT_NOT_FOUND);
      expect(await read({ ...project, projectId: '00000000-0000-4000-8000-000000000000' })).toMatchObject(PROJECT_NOT_FOUND);
      expect(await answer(client(other.ownerJwt).DELETE('/v1/orgs/{orgId}/projects/{projectId}', { params: { path: ids(other) } }))).toMatchObject({ status: 204 });
      expect(await read(other)).toMatchObject(PROJECT_NOT_FOUND);
    });
  });
});

