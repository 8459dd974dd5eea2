import { gatewayService } from '@runline/gateway-service';
import { invocationService } from '@runline/invocation-service';
import { consoleJwt, HttpClient, startTestSystem, type TestSystem } from '@runline/testing';
import { createProject, issueToken, type ProjectFixture } from './gateway-fixtures.js';
import { type Json } from './support/runs-support.js';

const ENDPOINTS_MESSAGE =
  'endpoint must be one of: bots.message, bots.invoke, flows.trigger, flows.trigger-async, automations.trigger, automations.trigger-async';
const TEMPLATE_NOT_FOUND = { status: 404, body: { error: 'Template not found' } };
const EDIT_ACCESS = { status: 403, body: { error: 'This action requires edit access to the project' } };
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const UNKNOWN_ID = '00000000-0000-4000-8000-000000000000';

/** The template library: GET / POST / PUT / DELETE /v1/orgs/{orgId}/projects/{projectId}/templates[/{id}]. */
describe('request templates', () => {
  let system: TestSystem;
  let http: HttpClient;
  let chatbot: ProjectFixture;
  let automation: ProjectFixture;
  const editor = consoleJwt('templates-editor');
  const viewer = consoleJwt('templates-viewer');
  const stranger = consoleJwt('templates-stranger');
  const templates = (project: ProjectFixture = chatbot) => `/v1/orgs/${project.orgId}/projects/${project.projectId}/templates`;
  const template = { name: 'New order', endpoint: 'flows.trigger', body: { event: 'order.created', customerId: 'c-1', orderId: '42' } };

  beforeAll(async () => {
    system = await startTestSystem([gatewayService, invocationService]);
    http = new HttpClient(system.url('gateway'));
    chatbot = await createProject(http, 'CHATBOT');
    for (const [userId, role] of [['templates-editor', 'EDITOR'], ['templates-viewer', 'VIEWER']]) {
      expect((await http.post(`/v1/orgs/${chatbot.orgId}/members`, { userId, role }, { bearer: chatbot.ownerJwt })).status).toBe(201);
    }
    const created = await http.post<{ projectId: string }>(`/v1/orgs/${chatbot.orgId}/projects`, { name: 'Automation', type: 'AUTOMATION' }, { bearer: chatbot.ownerJwt });
    automation = { ...chatbot, projectId: created.body.projectId };
  });
  afterAll(() => system?.stop());

  const create = (body: unknown, project = chatbot, bearer = editor) => http.post<Json>(templates(project), body, { bearer });

  it('creates, lists, reads, replaces and deletes a template; the body keeps its key order', async () => {
    const body = { zeta: 1, alpha: { b: 2, a: 1 }, event: 'e', customerId: 'c' };
    const created = await create({ ...template, body });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({ id: expect.any(String), name: 'New order', endpoint: 'flows.trigger', body, createdAt: expect.stringMatching(ISO), updatedAt: created.body.createdAt });
    const id = created.body.id as string;

    const listed = await http.get<{ data: Json[] }>(templates(), { bearer: viewer });
    expect(listed.status).toBe(200);
    expect(listed.body.data.find((entry) => entry.id === id)).toEqual(created.body);
    const read = await http.get<Json>(`${templates()}/${id}`, { bearer: viewer });
    expect(read).toMatchObject({ status: 200, body: created.body });
    expect(JSON.stringify(read.body.body)).toBe(JSON.stringify(body));

    const replaced = await http.put<Json>(`${templates()}/${id}`, { name: 'Later order', endpoint: 'flows.trigger-async', body: { event: 'x', customerId: 'y', runAt: '2099-01-01T00:00:00Z' } }, { bearer: chatbot.ownerJwt });
    expect(replaced.status).toBe(200);
    expect(replaced.body).toEqual({
      id,
      name: 'Later order',
      endpoint: 'flows.trigger-async',
      body: { event: 'x', customerId: 'y', runAt: '2099-01-01T00:00:00Z' },
      createdAt: created.body.createdAt,
      updatedAt: expect.stringMatching(ISO),
    });
    expect(Date.parse(replaced.body.updatedAt as string)).toBeGreaterThanOrEqual(Date.parse(created.body.createdAt as string));

    expect((await http.delete(`${templates()}/${id}`, { bearer: editor })).status).toBe(204);
    expect(await http.get(`${templates()}/${id}`, { bearer: editor })).toMatchObject(TEMPLATE_NOT_FOUND);
    expect(await http.delete(`${templates()}/${id}`, { bearer: editor })).toMatchObject(TEMPLATE_NOT_FOUND);
    expect(await http.put(`${templates()}/${id}`, template, { bearer: editor })).toMatchObject(TEMPLATE_NOT_FOUND);
  });

  it('404 Template not found for an unknown id, a malformed one, and another project’s template', async () => {
    const foreign = await create({ ...template, endpoint: 'automations.trigger' }, automation);
    expect(foreign.status).toBe(201);
    for (const id of [UNKNOWN_ID, 'not-a-uuid', foreign.body.id as string]) {
      expect(await http.get(`${templates()}/${id}`, { bearer: editor })).toMatchObject(TEMPLATE_NOT_FOUND);
      expect(await http.put(`${templates()}/${id}`, template, { bearer: editor })).toMatchObject(TEMPLATE_NOT_FOUND);
      expect(await http.delete(`${templates()}/${id}`, { bearer: editor })).toMatchObject(TEMPLATE_NOT_FOUND);
    }
    expect(await http.get(`${templates(automation)}/${foreign.body.id as string}`, { bearer: editor })).toMatchObject({ status: 200 });
  });

  it('the endpoint must be one of the six and suit the project type', async () => {
    expect(await create({ ...template, endpoint: 'flows.poll' })).toMatchObject({ status: 400, body: { error: ENDPOINTS_MESSAGE } });
    expect(await create({ ...template, endpoint: undefined })).toMatchObject({ status: 400, body: { error: 'endpoint is required' } });
    for (const endpoint of ['automations.trigger', 'automations.trigger-async']) {
      expect(await create({ ...template, endpoint })).toMatchObject({
        status: 400,
        body: { error: `endpoint ${endpoint} is not available for CHATBOT projects; use one of: bots.message, bots.invoke, flows.trigger, flows.trigger-async` },
      });
    }
    for (const endpoint of ['bots.message', 'bots.invoke', 'flows.trigger', 'flows.trigger-async']) {
      expect(await create({ ...template, endpoint }, automation)).toMatchObject({
        status: 400,
        body: { error: `endpoint ${endpoint} is not available for AUTOMATION projects; use one of: automations.trigger, automations.trigger-async` },
      });
      expect((await create({ ...template, endpoint })).status).toBe(201);
    }
    const saved = await create({ ...template, endpoint: 'automations.trigger-async' }, automation);
    expect(saved.status).toBe(201);
    expect(await http.put(`${templates(automation)}/${saved.body.id as string}`, { ...template, endpoint: 'flows.trigger' }, { bearer: editor })).toMatchObject({
      status: 400,
      body: { error: 'endpoint flows.trigger is not available for AUTOMATION projects; use one of: automations.trigger, automations.trigger-async' },
    });
  });

  it('400 for a missing or bad name or body, and a body over 64 KiB', async () => {
    expect(await create({ endpoint: 'flows.trigger', body: {} })).toMatchObject({ status: 400, body: { error: 'name is required' } });
    expect(await create({ ...template, name: '' })).toMatchObject({ status: 400, body: { error: 'name should not be empty' } });
    expect(await create({ ...template, name: 7 })).toMatchObject({ status: 400, body: { error: 'name must be a string' } });
    expect(await create({ ...template, name: 'x'.repeat(201) })).toMatchObject({ status: 400, body: { error: 'name must be shorter than or equal to 200 characters' } });
    expect((await create({ ...template, name: 'x'.repeat(200) })).status).toBe(201);
    expect(await create({ name: 'n', endpoint: 'flows.trigger' })).toMatchObject({ status: 400, body: { error: 'body is required' } });
    for (const body of [[1, 2], 'text', 3, true]) {
      expect(await create({ ...template, body })).toMatchObject({ status: 400, body: { error: 'body must be a JSON object' } });
    }
    expect(await create({ ...template, body: { big: 'x'.repeat(64 * 1024) } })).toMatchObject({ status: 400, body: { error: 'body must be at most 65536 bytes of JSON' } });
    // Counted in UTF-8 bytes: 30,000 three-byte characters are 90,000 bytes.
    expect(await create({ ...template, body: { big: '€'.repeat(30_000) } })).toMatchObject({ status: 400, body: { error: 'body must be at most 65536 bytes of JSON' } });
    expect((await create({ ...template, body: { big: 'x'.repeat(60 * 1024) } })).status).toBe(201);
  });

  it('refuses a body holding a secret, naming where; an empty secret field is fine', async () => {
    const body = {
      event: 'e',
      customerId: 'c',
      webhookSecret: 'whsec-abc',
      payload: { headers: { 'x-api-key': 'k-123' }, note: 'Bearer abc.def', items: [{ password: 'p' }] },
    };
    const refused = await create({ ...template, body });
    expect(refused).toMatchObject({
      status: 400,
      body: {
        error:
          'A template must not hold secrets (found: body.webhookSecret, body.payload.headers["x-api-key"], body.payload.note, body.payload.items[0].password); leave such fields empty and fill them in where the request is sent',
      },
    });
    expect(JSON.stringify(refused.body)).not.toMatch(/whsec-abc|k-123|abc\.def/);
    const issued = await issueToken(http, chatbot, ['flow:trigger']);
    expect(await create({ ...template, body: { event: 'e', note: `use ${issued.token}` } })).toMatchObject({ status: 400, body: { error: expect.stringContaining('(found: body.note)') } });
    const empty = await create({ ...template, body: { event: 'e', customerId: 'c', webhookSecret: '', callback: { secret: null } } });
    expect(empty).toMatchObject({ status: 201, body: { body: { webhookSecret: '', callback: { secret: null } } } });
    const saved = await create(template);
    expect(await http.put(`${templates()}/${saved.body.id as string}`, { ...template, body: { token: 't' } }, { bearer: editor })).toMatchObject({ status: 400, body: { error: expect.stringContaining('(found: body.token)') } });
  });

  it('a project holds at most 100 templates (409), and one more fits once one is deleted', async () => {
    const fresh = await createProject(http, 'AUTOMATION');
    const one = { name: 't', endpoint: 'automations.trigger', body: { event: 'e', payload: {} } };
    const first = await create(one, fresh, fresh.ownerJwt);
    // Concurrent creates must not pass the limit together.
    const rest = await Promise.all(Array.from({ length: 104 }, () => create(one, fresh, fresh.ownerJwt)));
    expect(rest.filter((answer) => answer.status === 201)).toHaveLength(99);
    expect(rest.filter((answer) => answer.status === 409)).toHaveLength(5);
    expect(rest.find((answer) => answer.status === 409)!.body).toEqual({ error: 'A project holds at most 100 templates; delete one first' });
    expect((await http.get<{ data: Json[] }>(templates(fresh), { bearer: fresh.ownerJwt })).body.data).toHaveLength(100);
    expect((await http.delete(`${templates(fresh)}/${first.body.id as string}`, { bearer: fresh.ownerJwt })).status).toBe(204);
    expect((await create(one, fresh, fresh.ownerJwt)).status).toBe(201);
  });

  it('members read; a VIEWER cannot change (403); a non-member gets 404; another organization’s project 404', async () => {
    const saved = await create(template);
    const id = saved.body.id as string;
    expect((await http.get(templates(), { bearer: viewer })).status).toBe(200);
    expect(await create(template, chatbot, viewer)).toMatchObject(EDIT_ACCESS);
    expect(await http.put(`${templates()}/${id}`, template, { bearer: viewer })).toMatchObject(EDIT_ACCESS);
    expect(await http.delete(`${templates()}/${id}`, { bearer: viewer })).toMatchObject(EDIT_ACCESS);

    const orgNotFound = { status: 404, body: { error: 'Organization not found' } };
    expect(await http.get(templates(), { bearer: stranger })).toMatchObject(orgNotFound);
    expect(await http.get(`${templates()}/${id}`, { bearer: stranger })).toMatchObject(orgNotFound);
    expect(await create(template, chatbot, stranger)).toMatchObject(orgNotFound);
    expect(await http.put(`${templates()}/${id}`, template, { bearer: stranger })).toMatchObject(orgNotFound);
    expect(await http.delete(`${templates()}/${id}`, { bearer: stranger })).toMatchObject(orgNotFound);

    const other = await createProject(http, 'CHATBOT');
    const foreign = `/v1/orgs/${chatbot.orgId}/projects/${other.projectId}/templates`;
    const projectNotFound = { status: 404, body: { error: 'Project not found' } };
    expect(await http.get(foreign, { bearer: chatbot.ownerJwt })).toMatchObject(projectNotFound);
    expect(await http.post(foreign, template, { bearer: chatbot.ownerJwt })).toMatchObject(projectNotFound);
    expect(await http.get(`${foreign}/${id}`, { bearer: chatbot.ownerJwt })).toMatchObject(projectNotFound);
  });

  it('401 without a JWT and with an API token, on every route', async () => {
    const saved = await create(template);
    const item = `${templates()}/${saved.body.id as string}`;
    const { token } = await issueToken(http, chatbot, ['flow:trigger']);
    const routes: Array<[string, string, unknown]> = [
      ['GET', templates(), undefined],
      ['POST', templates(), template],
      ['GET', item, undefined],
      ['PUT', item, template],
      ['DELETE', item, undefined],
    ];
    for (const [method, path, body] of routes) {
      expect(await http.request(method, path, { body })).toMatchObject({ status: 401, body: { error: 'Missing console token' } });
      expect(await http.request(method, path, { body, bearer: token })).toMatchObject({ status: 401, body: { error: 'Invalid or expired console token' } });
    }
    expect((await http.get(item, { bearer: editor })).status).toBe(200);
  });

  it("a deleted project's library answers 404 Project not found", async () => {
    const fresh = await createProject(http, 'CHATBOT');
    expect((await create(template, fresh, fresh.ownerJwt)).status).toBe(201);
    expect((await http.delete(`/v1/orgs/${fresh.orgId}/projects/${fresh.projectId}`, { bearer: fresh.ownerJwt })).status).toBe(204);
    expect(await http.get(templates(fresh), { bearer: fresh.ownerJwt })).toMatchObject({ status: 404, body: { error: 'Project not found' } });
  });
});
