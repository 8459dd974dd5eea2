import { gatewayService } from '@runline/gateway-service';
import { consoleJwt, HttpClient, startTestSystem, type TestSystem } from '@runline/testing';
import { issueToken, VALID_AUTOMATION_DEFINITION, VALID_CHATBOT_DEFINITION, type ProjectFixture } from './gateway-fixtures.js';

type Json = Record<string, unknown>;
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/**
 * The console's definition reads beyond the two stages (DESIGN section 5): the version history
 * (who published which version, when), one published version's document, and the definition's
 * JSON schema for the editor. Started from the console: a new user's organization and project.
 */
describe('definition history and schema (console API)', () => {
  let system: TestSystem;
  let http: HttpClient;
  let project: ProjectFixture;
  const owner = consoleJwt('history-owner');
  const editor = consoleJwt('history-editor');
  const viewer = consoleJwt('history-viewer');
  const stranger = consoleJwt('history-stranger');
  const base = (p: ProjectFixture = project) => `/v1/orgs/${p.orgId}/projects/${p.projectId}`;
  const second = { ...VALID_AUTOMATION_DEFINITION, workflow: { ...VALID_AUTOMATION_DEFINITION.workflow, nodes: { n1: { type: 'return', value: "{ 'ok': false }" } } } };

  beforeAll(async () => {
    system = await startTestSystem([gatewayService]);
    http = new HttpClient(system.url('gateway'));
    const org = await http.post<{ orgId: string }>('/v1/orgs', { name: 'History' }, { bearer: owner });
    const created = await http.post<{ projectId: string }>(`/v1/orgs/${org.body.orgId}/projects`, { name: 'Orders', type: 'AUTOMATION' }, { bearer: owner });
    project = { orgId: org.body.orgId, projectId: created.body.projectId, ownerJwt: owner };
    for (const [userId, role] of [['history-editor', 'EDITOR'], ['history-viewer', 'VIEWER']]) {
      expect((await http.post(`/v1/orgs/${project.orgId}/members`, { userId, role }, { bearer: owner })).status).toBe(201);
    }
  });
  afterAll(() => system?.stop());

  it('is empty before the first publish; then lists each published version newest first with who published it and when', async () => {
    expect(await http.get(`${base()}/definition/versions`, { bearer: viewer })).toMatchObject({ status: 200, body: { data: [] } });
    expect((await http.put(`${base()}/definition`, { definition: VALID_AUTOMATION_DEFINITION }, { bearer: owner })).status).toBe(200);
    expect(await http.post(`${base()}/publish`, {}, { bearer: owner })).toMatchObject({ status: 200, body: { publishedVersion: 1 } });
    // The same draft published again by someone else: still version 1, first published by the owner.
    expect(await http.post(`${base()}/publish`, {}, { bearer: editor })).toMatchObject({ status: 200, body: { publishedVersion: 1 } });
    expect((await http.put(`${base()}/definition`, { definition: second }, { bearer: editor })).status).toBe(200);
    expect(await http.post(`${base()}/publish`, {}, { bearer: editor })).toMatchObject({ status: 200, body: { publishedVersion: 2 } });

    const history = await http.get<{ data: Json[] }>(`${base()}/definition/versions`, { bearer: viewer });
    expect(history.status).toBe(200);
    expect(history.body.data).toEqual([
      { version: 2, publishedBy: 'history-editor', publishedAt: expect.stringMatching(ISO) },
      { version: 1, publishedBy: 'history-owner', publishedAt: expect.stringMatching(ISO) },
    ]);
    expect(Date.parse(history.body.data[0]!.publishedAt as string)).toBeGreaterThanOrEqual(Date.parse(history.body.data[1]!.publishedAt as string));
  });

  it('answers the document of a published version, to any member', async () => {
    const first = await http.get<Json>(`${base()}/definition/versions/1`, { bearer: viewer });
    expect(first).toMatchObject({ status: 200, body: { version: 1, definition: VALID_AUTOMATION_DEFINITION, publishedBy: 'history-owner' } });
    // Key order as saved (a json column, like the stages).
    expect(JSON.stringify(first.body.definition)).toBe(JSON.stringify(VALID_AUTOMATION_DEFINITION));
    expect(await http.get(`${base()}/definition/versions/2`, { bearer: viewer })).toMatchObject({ status: 200, body: { version: 2, definition: second } });
  });

  it.each(['0', '-1', 'one', '1.5', '99999999999'])('version %s: 400 version must be a positive integer', async (version) => {
    expect(await http.get(`${base()}/definition/versions/${version}`, { bearer: viewer })).toEqual(
      expect.objectContaining({ status: 400, body: { error: 'version must be a positive integer' } }),
    );
  });

  it('a version never published: 404 Definition version not found', async () => {
    expect(await http.get(`${base()}/definition/versions/3`, { bearer: viewer })).toEqual(expect.objectContaining({ status: 404, body: { error: 'Definition version not found' } }));
  });

  it('answers the schema of definitions with the graphs the project type takes', async () => {
    const answer = await http.get<{ requiredGraphs: string[]; optionalGraphs: string[]; schema: { $defs: { node: { oneOf: Array<{ properties: { type: { const: string } } }> } } } }>(
      `${base()}/definition/schema`,
      { bearer: viewer },
    );
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ requiredGraphs: ['workflow'], optionalGraphs: [], starterDefinition: { schemaVersion: 1, workflow: { start: 'n1' } } });
    expect(answer.body.schema.$defs.node.oneOf.map((shape) => shape.properties.type.const)).toEqual(
      expect.arrayContaining(['message', 'action', 'set', 'branch', 'http', 'wait', 'approval', 'ask', 'fail', 'return', 'end']),
    );
    const chatbot = await createChatbot();
    expect(await http.get(`${base(chatbot)}/definition/schema`, { bearer: owner })).toMatchObject({ status: 200, body: { requiredGraphs: ['bot'], optionalGraphs: ['flow'], starterDefinition: { bot: { start: 'hello' } } } });
  });

  it('refuses a non-member (404), a missing or API token (401), and a project of another organization (404)', async () => {
    const token = (await issueToken(http, project, ['automation:trigger'])).token;
    for (const path of ['/definition/versions', '/definition/versions/1', '/definition/schema']) {
      expect(await http.get(`${base()}${path}`, { bearer: stranger })).toEqual(expect.objectContaining({ status: 404, body: { error: 'Organization not found' } }));
      expect(await http.get(`${base()}${path}`)).toEqual(expect.objectContaining({ status: 401, body: { error: 'Missing console token' } }));
      expect(await http.get(`${base()}${path}`, { bearer: token })).toEqual(expect.objectContaining({ status: 401, body: { error: 'Invalid or expired console token' } }));
      const other = await createChatbot();
      expect(await http.get(`/v1/orgs/${project.orgId}/projects/${other.projectId}${path}`, { bearer: owner })).toEqual(expect.objectContaining({ status: 404, body: { error: 'Project not found' } }));
    }
  });

  async function createChatbot(): Promise<ProjectFixture> {
    const org = await http.post<{ orgId: string }>('/v1/orgs', { name: 'Bots' }, { bearer: owner });
    const created = await http.post<{ projectId: string }>(`/v1/orgs/${org.body.orgId}/projects`, { name: 'Bot', type: 'CHATBOT' }, { bearer: owner });
    expect((await http.put(`/v1/orgs/${org.body.orgId}/projects/${created.body.projectId}/definition`, { definition: VALID_CHATBOT_DEFINITION }, { bearer: owner })).status).toBe(200);
    return { orgId: org.body.orgId, projectId: created.body.projectId, ownerJwt: owner };
  }
});
