import { gatewayService } from '@runline/gateway-service';
import { invocationService } from '@runline/invocation-service';
import { consoleJwt, HttpClient, queryDatabase, startTestSystem, TEST_CONSOLE_JWT_SECRET, type TestSystem } from '@runline/testing';
import jwt from 'jsonwebtoken';
import { createProject, issueToken, VALID_AUTOMATION_DEFINITION, VALID_CHATBOT_DEFINITION, type ProjectFixture } from './gateway-fixtures.js';

/** Every console route with its 400 / 401 / 403 / 404. */
describe('console API', () => {
  let system: TestSystem;
  let http: HttpClient;
  let project: ProjectFixture;
  const editor = consoleJwt('editor-user');
  const viewer = consoleJwt('viewer-user');
  const stranger = consoleJwt('stranger-user');
  const admin = consoleJwt('platform-admin-user', { roles: ['platform-admin'] });
  const base = () => `/v1/orgs/${project.orgId}/projects/${project.projectId}`;
  const sql = (query: string, parameters: unknown[] = []) => queryDatabase(system.database.url, query, parameters);

  beforeAll(async () => {
    system = await startTestSystem([gatewayService, invocationService]);
    http = new HttpClient(system.url('gateway'));
    project = await createProject(http, 'CHATBOT');
    await http.post(`/v1/orgs/${project.orgId}/members`, { userId: 'editor-user', role: 'EDITOR' }, { bearer: project.ownerJwt });
    await http.post(`/v1/orgs/${project.orgId}/members`, { userId: 'viewer-user', role: 'VIEWER' }, { bearer: project.ownerJwt });
  });
  afterAll(() => system?.stop());

  describe('authentication (every console route)', () => {
    const routes: Array<[string, () => string, unknown]> = [
      ['POST', () => '/v1/orgs', { name: 'x' }],
      ['PUT', () => `/v1/orgs/${project.orgId}/plan`, {}],
      ['POST', () => `/v1/orgs/${project.orgId}/members`, {}],
      ['POST', () => `/v1/orgs/${project.orgId}/projects`, {}],
      ['PUT', () => `${base()}/definition`, {}],
      ['POST', () => `${base()}/publish`, undefined],
      ['GET', () => `${base()}/api-settings`, undefined],
      ['PATCH', () => `${base()}/api-settings`, {}],
      ['POST', () => `${base()}/api-tokens`, {}],
      ['GET', () => `${base()}/api-tokens`, undefined],
      ['DELETE', () => `${base()}/api-tokens/00000000-0000-4000-8000-000000000000`, undefined],
    ];

    it.each(routes)('%s %s: 401 without a JWT, with a bad one and with an expired one', async (method, path, body) => {
      expect(await http.request(method, path(), { body })).toMatchObject({ status: 401, body: { error: 'Missing console token' } });
      const forged = jwt.sign({ sub: 'alice' }, 'some-other-secret-of-enough-length', { algorithm: 'HS256' });
      const expired = jwt.sign({ sub: 'alice', exp: Math.floor(Date.now() / 1000) - 10 }, TEST_CONSOLE_JWT_SECRET, { algorithm: 'HS256' });
      const noSubject = jwt.sign({ roles: [] }, TEST_CONSOLE_JWT_SECRET, { algorithm: 'HS256' });
      const unsigned = jwt.sign({ sub: 'alice' }, '', { algorithm: 'none' });
      for (const bad of [forged, expired, noSubject, unsigned, 'not-a-jwt']) {
        expect(await http.request(method, path(), { body, bearer: bad })).toMatchObject({ status: 401, body: { error: 'Invalid or expired console token' } });
      }
    });
  });

  describe('POST /v1/orgs', () => {
    it('201 {orgId, name}; the caller becomes OWNER', async () => {
      const created = await http.post<{ orgId: string; name: string }>('/v1/orgs', { name: 'Acme' }, { bearer: consoleJwt('founder') });
      expect(created.status).toBe(201);
      expect(created.body).toEqual({ orgId: expect.stringMatching(/^[0-9a-f-]{36}$/), name: 'Acme' });
      const [member] = await sql(`SELECT role FROM gateway.memberships WHERE org_id = $1 AND user_id = 'founder'`, [created.body.orgId]);
      expect(member.role).toBe('OWNER');
    });

    it('400 naming the field', async () => {
      expect(await http.post('/v1/orgs', {}, { bearer: editor })).toMatchObject({ status: 400, body: { error: 'name is required' } });
      expect(await http.post('/v1/orgs', { name: 7 }, { bearer: editor })).toMatchObject({ status: 400, body: { error: 'name must be a string' } });
    });
  });

  describe('PUT /v1/orgs/{orgId}/plan', () => {
    const plan = { monthlyQuota: 1000, rateLimitPerMinute: 60, rateLimitWindowMs: 60000, renewalDay: 15 };

    it('200 for a platform-admin, and the plan is emitted for other services', async () => {
      const answer = await http.put(`/v1/orgs/${project.orgId}/plan`, plan, { bearer: admin });
      expect(answer).toMatchObject({ status: 200, body: { orgId: project.orgId, ...plan } });
      await eventually(async () => {
        const [copy] = await sql(`SELECT monthly_quota, renewal_day FROM invocation.organization_copies WHERE org_id = $1`, [project.orgId]);
        expect(copy).toEqual({ monthly_quota: '1000', renewal_day: 15 });
      });
      const unlimited = await http.put(`/v1/orgs/${project.orgId}/plan`, { ...plan, monthlyQuota: null, renewalDay: null }, { bearer: admin });
      expect(unlimited).toMatchObject({ status: 200, body: { monthlyQuota: null, renewalDay: null } });
    });

    it('403 for anyone else, even the OWNER', async () => {
      expect(await http.put(`/v1/orgs/${project.orgId}/plan`, plan, { bearer: project.ownerJwt })).toMatchObject({
        status: 403,
        body: { error: 'This action requires the platform-admin role' },
      });
    });

    it('404 for an unknown organization', async () => {
      expect(await http.put('/v1/orgs/00000000-0000-4000-8000-000000000000/plan', plan, { bearer: admin })).toMatchObject({
        status: 404,
        body: { error: 'Organization not found' },
      });
    });

    it('400 for a bad plan', async () => {
      expect(await http.put(`/v1/orgs/${project.orgId}/plan`, { ...plan, renewalDay: 29 }, { bearer: admin })).toMatchObject({
        status: 400,
        body: { error: 'renewalDay must not be greater than 28' },
      });
      const { monthlyQuota: _omitted, ...missing } = plan;
      expect(await http.put(`/v1/orgs/${project.orgId}/plan`, missing, { bearer: admin })).toMatchObject({
        status: 400,
        body: { error: 'monthlyQuota is required (an integer, or null for unlimited)' },
      });
    });
  });

  describe('POST /v1/orgs/{orgId}/members', () => {
    it('201 for the OWNER; 409 for a second time', async () => {
      const added = await http.post(`/v1/orgs/${project.orgId}/members`, { userId: 'new-user', role: 'VIEWER' }, { bearer: project.ownerJwt });
      expect(added).toMatchObject({ status: 201, body: { orgId: project.orgId, userId: 'new-user', role: 'VIEWER' } });
      expect((await http.post(`/v1/orgs/${project.orgId}/members`, { userId: 'new-user', role: 'EDITOR' }, { bearer: project.ownerJwt })).status).toBe(409);
    });

    it('403 for an EDITOR, 404 for a non-member, 400 for a bad role', async () => {
      const body = { userId: 'someone', role: 'EDITOR' };
      expect(await http.post(`/v1/orgs/${project.orgId}/members`, body, { bearer: editor })).toMatchObject({
        status: 403,
        body: { error: 'This action requires the OWNER role' },
      });
      expect(await http.post(`/v1/orgs/${project.orgId}/members`, body, { bearer: stranger })).toMatchObject({
        status: 404,
        body: { error: 'Organization not found' },
      });
      expect(await http.post(`/v1/orgs/${project.orgId}/members`, { userId: 'x', role: 'GOD' }, { bearer: project.ownerJwt })).toMatchObject({
        status: 400,
        body: { error: 'role must be one of: OWNER, EDITOR, VIEWER' },
      });
    });
  });

  describe('POST /v1/orgs/{orgId}/projects', () => {
    it('201 {projectId, name, type} for edit access', async () => {
      const created = await http.post(`/v1/orgs/${project.orgId}/projects`, { name: 'Flows', type: 'AUTOMATION' }, { bearer: editor });
      expect(created).toMatchObject({ status: 201, body: { name: 'Flows', type: 'AUTOMATION', projectId: expect.any(String) } });
    });

    it('403 for a VIEWER, 404 for a non-member, 400 for a bad type', async () => {
      const body = { name: 'P', type: 'CHATBOT' };
      expect(await http.post(`/v1/orgs/${project.orgId}/projects`, body, { bearer: viewer })).toMatchObject({
        status: 403,
        body: { error: 'This action requires edit access to the project' },
      });
      expect(await http.post(`/v1/orgs/${project.orgId}/projects`, body, { bearer: stranger })).toMatchObject({ status: 404, body: { error: 'Organization not found' } });
      expect(await http.post(`/v1/orgs/${project.orgId}/projects`, { name: 'P', type: 'ROBOT' }, { bearer: editor })).toMatchObject({
        status: 400,
        body: { error: 'type must be one of: CHATBOT, AUTOMATION' },
      });
    });
  });

  describe('definition draft and publish', () => {
    it('saves valid drafts, publishes draft versions 1 and 2, and emits each publication', async () => {
      const fresh = await createProject(http, 'AUTOMATION');
      const path = `/v1/orgs/${fresh.orgId}/projects/${fresh.projectId}`;
      expect(await http.post(`${path}/publish`, undefined, { bearer: fresh.ownerJwt })).toMatchObject({
        status: 409,
        body: { error: 'There is no draft definition to publish' },
      });
      expect((await http.put(`${path}/definition`, { definition: VALID_AUTOMATION_DEFINITION }, { bearer: fresh.ownerJwt })).status).toBe(200);
      expect(await http.post(`${path}/publish`, undefined, { bearer: fresh.ownerJwt })).toEqual(expect.objectContaining({ status: 200, body: { publishedVersion: 1 } }));
      // The number is the draft's: publishing the same draft again publishes the same version.
      expect(await http.post(`${path}/publish`, undefined, { bearer: fresh.ownerJwt })).toEqual(expect.objectContaining({ status: 200, body: { publishedVersion: 1 } }));
      expect(await http.put(`${path}/definition`, { definition: VALID_AUTOMATION_DEFINITION }, { bearer: fresh.ownerJwt })).toMatchObject({ status: 200, body: { draftVersion: 2, publishedVersion: 1 } });
      expect(await http.post(`${path}/publish`, undefined, { bearer: fresh.ownerJwt })).toEqual(expect.objectContaining({ status: 200, body: { publishedVersion: 2 } }));
      await eventually(async () => {
        const [copy] = await sql(`SELECT published_version, published_definition FROM invocation.project_copies WHERE project_id = $1`, [fresh.projectId]);
        expect(copy.published_version).toBe(2);
        expect(copy.published_definition).toEqual(VALID_AUTOMATION_DEFINITION);
      });
    });

    it('400 naming the node and the problem for a bad definition', async () => {
      const dangling = structuredClone(VALID_CHATBOT_DEFINITION);
      dangling.flow.nodes.n1.next = 'n9';
      const answer = await http.put(`${base()}/definition`, { definition: dangling }, { bearer: editor });
      expect(answer.status).toBe(400);
      expect(answer.body.error).toMatch(/node "n1"/);
      expect(answer.body.error).toMatch(/n9/);
      const badExpression = structuredClone(VALID_AUTOMATION_DEFINITION);
      badExpression.workflow.nodes.n1.value = '{ unclosed';
      const automation = await createProject(http, 'AUTOMATION');
      const second = await http.put(`/v1/orgs/${automation.orgId}/projects/${automation.projectId}/definition`, { definition: badExpression }, { bearer: automation.ownerJwt });
      expect(second.status).toBe(400);
      expect(second.body.error).toMatch(/node "n1"/);
      expect(await http.put(`${base()}/definition`, {}, { bearer: editor })).toMatchObject({ status: 400, body: { error: 'definition is required' } });
    });

    it('403 for a VIEWER, 404 for another organization\'s project', async () => {
      expect(await http.put(`${base()}/definition`, { definition: VALID_CHATBOT_DEFINITION }, { bearer: viewer })).toMatchObject({ status: 403 });
      expect(await http.post(`${base()}/publish`, undefined, { bearer: viewer })).toMatchObject({ status: 403 });
      const other = await createProject(http, 'CHATBOT');
      expect(await http.put(`/v1/orgs/${project.orgId}/projects/${other.projectId}/definition`, { definition: VALID_CHATBOT_DEFINITION }, { bearer: project.ownerJwt })).toMatchObject({
        status: 404,
        body: { error: 'Project not found' },
      });
      expect(await http.post(`/v1/orgs/${other.orgId}/projects/${other.projectId}/publish`, undefined, { bearer: project.ownerJwt })).toMatchObject({
        status: 404,
        body: { error: 'Organization not found' },
      });
    });
  });

  describe('API settings', () => {
    it('GET shows the spec defaults to any member', async () => {
      const answer = await http.get(`${base()}/api-settings`, { bearer: viewer });
      expect(answer.status).toBe(200);
      expect(answer.body).toMatchObject({
        externalApiEnabled: true,
        defaultEnrollmentPolicy: 'ONE_TIME',
        defaultOnErrorPolicy: 'ABORT',
        defaultCallbackUrl: null,
        defaultCallbackSecretSet: false,
        rateLimitPerMinute: null,
        rateLimitWindowMs: null,
      });
    });

    it('PATCH changes them; the callback secret is write-only, sealed at rest, and emitted', async () => {
      const changes = {
        defaultEnrollmentPolicy: 'EVERY_MATCH',
        defaultOnErrorPolicy: 'CONTINUE',
        defaultCallbackUrl: 'https://hooks.example.com/runline',
        defaultCallbackSecret: 'whsec-super-secret-value',
        rateLimitPerMinute: 30,
        rateLimitWindowMs: 30000,
      };
      const answer = await http.patch(`${base()}/api-settings`, changes, { bearer: editor });
      expect(answer.status).toBe(200);
      expect(JSON.stringify(answer.body)).not.toContain('whsec-super-secret-value');
      expect(answer.body).toMatchObject({ defaultCallbackSecretSet: true, defaultEnrollmentPolicy: 'EVERY_MATCH', rateLimitPerMinute: 30 });
      const [row] = await sql(`SELECT default_callback_secret_sealed FROM gateway.project_api_settings WHERE project_id = $1`, [project.projectId]);
      expect(row.default_callback_secret_sealed).toMatch(/^v1\./);
      expect(row.default_callback_secret_sealed).not.toContain('super-secret');
      await eventually(async () => {
        const [copy] = await sql(`SELECT default_enrollment_policy, default_callback_secret_sealed FROM invocation.project_copies WHERE project_id = $1`, [project.projectId]);
        expect(copy.default_enrollment_policy).toBe('EVERY_MATCH');
        expect(copy.default_callback_secret_sealed).toMatch(/^v1\./);
      });
      const cleared = await http.patch(`${base()}/api-settings`, { defaultCallbackSecret: null, defaultCallbackUrl: null }, { bearer: editor });
      expect(cleared.body).toMatchObject({ defaultCallbackSecretSet: false, defaultCallbackUrl: null });
    });

    it('400 for a callback URL that is not https; 403 for a VIEWER; 404 for a non-member', async () => {
      expect(await http.patch(`${base()}/api-settings`, { defaultCallbackUrl: 'http://hooks.example.com' }, { bearer: editor })).toMatchObject({
        status: 400,
        body: { error: 'defaultCallbackUrl must be an https URL' },
      });
      expect(await http.patch(`${base()}/api-settings`, { externalApiEnabled: 'no' }, { bearer: editor })).toMatchObject({
        status: 400,
        body: { error: 'externalApiEnabled must be a boolean value' },
      });
      expect(await http.patch(`${base()}/api-settings`, { externalApiEnabled: false }, { bearer: viewer })).toMatchObject({ status: 403 });
      expect(await http.get(`${base()}/api-settings`, { bearer: stranger })).toMatchObject({ status: 404, body: { error: 'Organization not found' } });
    });
  });

  describe('API tokens', () => {
    it('creates a token shown once, lists it without the secret, revokes it and emits the revocation', async () => {
      const created = await http.post<Record<string, unknown>>(`${base()}/api-tokens`, { name: 'ci', scopes: ['flow:trigger', 'bot:invoke'] }, { bearer: editor });
      expect(created.status).toBe(201);
      expect(created.body).toMatchObject({ id: expect.any(String), name: 'ci', scopes: ['flow:trigger', 'bot:invoke'] });
      const token = created.body.token as string;
      expect(token).toMatch(/^rl_ext_[0-9A-Za-z]{38}$/);
      expect(token.startsWith(created.body.prefix as string)).toBe(true);

      const listed = await http.get<{ data: Array<Record<string, unknown>> }>(`${base()}/api-tokens`, { bearer: viewer });
      expect(listed.status).toBe(200);
      const entry = listed.body.data.find((t) => t.id === created.body.id)!;
      expect(Object.keys(entry).sort()).toEqual(['createdAt', 'expiresAt', 'id', 'lastUsedAt', 'name', 'prefix', 'scopes']);
      expect(JSON.stringify(listed.body)).not.toContain(token);

      expect((await http.delete(`${base()}/api-tokens/${created.body.id}`, { bearer: editor })).status).toBe(204);
      const after = await http.get<{ data: Array<{ id: string }> }>(`${base()}/api-tokens`, { bearer: viewer });
      expect(after.body.data.some((t) => t.id === created.body.id)).toBe(false);
      expect(await http.delete(`${base()}/api-tokens/${created.body.id}`, { bearer: editor })).toMatchObject({ status: 404, body: { error: 'API token not found' } });
      const revocations = await sql(`SELECT subject FROM gateway.outbox WHERE subject = 'gateway.evt.api-token-revoked'`);
      expect(revocations.length).toBeGreaterThanOrEqual(1);
    });

    it('offers flow:trigger for chatbot projects only', async () => {
      const automation = await createProject(http, 'AUTOMATION');
      expect(await http.post(`/v1/orgs/${automation.orgId}/projects/${automation.projectId}/api-tokens`, { name: 'x', scopes: ['flow:trigger'] }, { bearer: automation.ownerJwt })).toMatchObject({
        status: 400,
        body: { error: 'flow:trigger is only offered for chatbot projects' },
      });
    });

    it('400 for bad scopes or expiry; 403 for a VIEWER; 404 for a non-member or an unknown token', async () => {
      expect(await http.post(`${base()}/api-tokens`, { name: 'x', scopes: ['admin'] }, { bearer: editor })).toMatchObject({
        status: 400,
        body: { error: 'scopes must be drawn from: bot:invoke, flow:trigger, automation:trigger' },
      });
      expect(await http.post(`${base()}/api-tokens`, { name: 'x', scopes: [] }, { bearer: editor })).toMatchObject({
        status: 400,
        body: { error: 'scopes must name at least one scope' },
      });
      expect(await http.post(`${base()}/api-tokens`, { name: 'x', scopes: ['bot:invoke'], expiresAt: '2000-01-01T00:00:00Z' }, { bearer: editor })).toMatchObject({
        status: 400,
        body: { error: 'expiresAt must be in the future' },
      });
      expect(await http.post(`${base()}/api-tokens`, { name: 'x', scopes: ['bot:invoke'] }, { bearer: viewer })).toMatchObject({ status: 403 });
      expect(await http.get(`${base()}/api-tokens`, { bearer: stranger })).toMatchObject({ status: 404 });
      expect(await http.delete(`${base()}/api-tokens/not-a-uuid`, { bearer: editor })).toMatchObject({ status: 404, body: { error: 'API token not found' } });
    });

    it('never stores a raw token: only its SHA-256', async () => {
      const issued = await issueToken(http, project, ['bot:invoke']);
      const dump = await sql(`SELECT string_agg(t::text, ' ') AS everything FROM gateway.api_tokens t`);
      expect(dump[0].everything).not.toContain(issued.token);
      const { createHash } = await import('node:crypto');
      expect(dump[0].everything).toContain(createHash('sha256').update(issued.token).digest('hex'));
    });
  });
});

async function eventually(check: () => Promise<void>, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      await check();
      return;
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
}
