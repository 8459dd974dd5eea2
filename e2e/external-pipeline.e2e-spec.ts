import { gatewayService } from '@runline/gateway-service';
import { invocationService } from '@runline/invocation-service';
import { HttpClient, queryDatabase, startTestSystem, type TestSystem } from '@runline/testing';
import { createProject, createPublishedProject, issueToken, type ProjectFixture } from './gateway-fixtures.js';

/**
 * The external API's pipeline, checked in the pipeline's order with exact statuses and messages:
 * version, token (form, then known and live), project exists, token of that project, master
 * switch, project type, scope, body, rate limit.
 */
describe('external API pipeline', () => {
  let system: TestSystem;
  let http: HttpClient;
  let chatbot: ProjectFixture;
  let automation: ProjectFixture;
  let flowToken: string;
  let automationToken: string;
  const sql = (query: string, parameters: unknown[] = []) => queryDatabase(system.database.url, query, parameters);
  const flowTrigger = (project: ProjectFixture) => `/v1/orgs/${project.orgId}/flows/${project.projectId}/trigger`;
  const body = { event: 'order.created', customerId: 'c-1', orderId: '42' };
  const PASSED_PIPELINE = 200; // the sync flow run of the published definition succeeded

  beforeAll(async () => {
    // A zero TTL makes every call read the database, so changes show up at once in these tests.
    system = await startTestSystem([gatewayService, invocationService], { environment: { ACCESS_CACHE_TTL_MS: '0' } });
    http = new HttpClient(system.url('gateway'));
    chatbot = await createPublishedProject(http, 'CHATBOT');
    automation = await createPublishedProject(http, 'AUTOMATION');
    flowToken = (await issueToken(http, chatbot, ['flow:trigger', 'bot:invoke'])).token;
    automationToken = (await issueToken(http, automation, ['automation:trigger'])).token;
  });
  afterAll(() => system?.stop());

  describe('version', () => {
    it.each(['v2', 'v0', 'V1', 'latest'])('refuses %s with the version error, before anything else', async (version) => {
      const answer = await http.post(`/${version}/orgs/${chatbot.orgId}/flows/${chatbot.projectId}/trigger`, undefined, { rawBody: '{not json' });
      expect(answer.status).toBe(400);
      expect(answer.body).toEqual({ error: 'Unsupported API version', code: 'UNSUPPORTED_API_VERSION', supportedVersions: ['v1'] });
    });

    it('applies to console routes too', async () => {
      const answer = await http.post('/v3/orgs', { name: 'x' }, { bearer: chatbot.ownerJwt });
      expect(answer).toMatchObject({ status: 400, body: { error: 'Unsupported API version' } });
    });
  });

  describe('token', () => {
    it('401 Missing API token without Authorization Bearer or x-api-key', async () => {
      const headerSets: Array<Record<string, string>> = [{}, { authorization: 'Basic dXNlcjpwYXNz' }, { authorization: 'Bearer' }, { 'x-api-key': '' }];
      for (const headers of headerSets) {
        const answer = await http.post(flowTrigger(chatbot), body, { headers });
        expect(answer).toMatchObject({ status: 401, body: { error: 'Missing API token' } });
      }
    });

    it('accepts the token as Bearer or as x-api-key', async () => {
      expect((await http.post(flowTrigger(chatbot), body, { bearer: flowToken })).status).toBe(PASSED_PIPELINE);
      expect((await http.post(flowTrigger(chatbot), body, { headers: { 'x-api-key': flowToken } })).status).toBe(PASSED_PIPELINE);
    });

    it('401 Invalid API token for a malformed token, without reading the database', async () => {
      const readsBefore = await tokenReads();
      const changed = flowToken.slice(0, -1) + (flowToken.endsWith('a') ? 'b' : 'a');
      for (const token of ['nonsense', 'rl_ext_short', changed, flowToken.replace('rl_', 'xx_')]) {
        expect(await http.post(flowTrigger(chatbot), body, { bearer: token })).toMatchObject({ status: 401, body: { error: 'Invalid API token' } });
      }
      expect(await tokenReads()).toBe(readsBefore);
    });

    it('401 Invalid API token for a well-formed token that does not exist', async () => {
      // Well-formed, checksum and all, but no longer in the database.
      const issued = await issueToken(http, chatbot, ['flow:trigger']);
      await sql(`DELETE FROM gateway.api_tokens WHERE id = $1`, [issued.id]);
      const stranger = issued.token;
      const readsBefore = await tokenReads();
      expect(await http.post(flowTrigger(chatbot), body, { bearer: stranger })).toMatchObject({ status: 401, body: { error: 'Invalid API token' } });
      expect(await tokenReads()).toBe(readsBefore + 1);
    });

    it('401 Invalid API token once revoked', async () => {
      const issued = await issueToken(http, chatbot, ['flow:trigger']);
      expect((await http.post(flowTrigger(chatbot), body, { bearer: issued.token })).status).toBe(PASSED_PIPELINE);
      const revoked = await http.delete(`/v1/orgs/${chatbot.orgId}/projects/${chatbot.projectId}/api-tokens/${issued.id}`, { bearer: chatbot.ownerJwt });
      expect(revoked.status).toBe(204);
      expect(await http.post(flowTrigger(chatbot), body, { bearer: issued.token })).toMatchObject({ status: 401, body: { error: 'Invalid API token' } });
    });

    it('401 Invalid API token once expired', async () => {
      const issued = await issueToken(http, chatbot, ['flow:trigger'], { expiresAt: new Date(Date.now() + 60_000).toISOString() });
      expect((await http.post(flowTrigger(chatbot), body, { bearer: issued.token })).status).toBe(PASSED_PIPELINE);
      await sql(`UPDATE gateway.api_tokens SET expires_at = now() - interval '1 second' WHERE id = $1`, [issued.id]);
      expect(await http.post(flowTrigger(chatbot), body, { bearer: issued.token })).toMatchObject({ status: 401, body: { error: 'Invalid API token' } });
    });

    it('401 Invalid API token for a token of another project', async () => {
      const other = await createProject(http, 'CHATBOT');
      const answer = await http.post(flowTrigger(other), body, { bearer: flowToken });
      expect(answer).toMatchObject({ status: 401, body: { error: 'Invalid API token' } });
      const sameOrgProject = await http.post<{ projectId: string }>(`/v1/orgs/${chatbot.orgId}/projects`, { name: 'second', type: 'CHATBOT' }, { bearer: chatbot.ownerJwt });
      const inSameOrg = await http.post(`/v1/orgs/${chatbot.orgId}/flows/${sameOrgProject.body.projectId}/trigger`, body, { bearer: flowToken });
      expect(inSameOrg).toMatchObject({ status: 401, body: { error: 'Invalid API token' } });
    });
  });

  describe('project', () => {
    it('404 Project not found for a wrong orgId', async () => {
      const wrongOrg = { ...chatbot, orgId: '00000000-0000-4000-8000-000000000000' };
      expect(await http.post(flowTrigger(wrongOrg), body, { bearer: flowToken })).toMatchObject({ status: 404, body: { error: 'Project not found' } });
      expect(await http.post(flowTrigger({ ...chatbot, orgId: 'not-a-uuid' }), body, { bearer: flowToken })).toMatchObject({ status: 404 });
    });

    it('404 Project not found for a deleted project', async () => {
      const doomed = await createProject(http, 'CHATBOT');
      const token = (await issueToken(http, doomed, ['flow:trigger'])).token;
      expect((await http.delete(`/v1/orgs/${doomed.orgId}/projects/${doomed.projectId}`, { bearer: doomed.ownerJwt })).status).toBe(204);
      expect(await http.post(flowTrigger(doomed), body, { bearer: token })).toMatchObject({ status: 404, body: { error: 'Project not found' } });
    });

    it('404 Project not found for a project id that does not exist, before the token is matched to it', async () => {
      const missing = { ...chatbot, projectId: '00000000-0000-4000-8000-000000000001' };
      expect(await http.post(flowTrigger(missing), body, { bearer: flowToken })).toMatchObject({ status: 404, body: { error: 'Project not found' } });
      expect(await http.post(flowTrigger({ ...chatbot, projectId: 'not-a-uuid' }), body, { bearer: flowToken })).toMatchObject({
        status: 404,
        body: { error: 'Project not found' },
      });
      // Another organization's existing project is not found through this orgId either.
      expect(await http.post(flowTrigger({ ...chatbot, projectId: automation.projectId }), body, { bearer: flowToken })).toMatchObject({
        status: 404,
        body: { error: 'Project not found' },
      });
    });
  });

  describe('master switch', () => {
    it('403 while Enable External API is off; tokens work again once it is on', async () => {
      const project = await createPublishedProject(http, 'CHATBOT');
      const token = (await issueToken(http, project, ['flow:trigger'])).token;
      const settings = `/v1/orgs/${project.orgId}/projects/${project.projectId}/api-settings`;
      expect((await http.patch(settings, { externalApiEnabled: false }, { bearer: project.ownerJwt })).status).toBe(200);
      // The switch is checked before scope and project type.
      expect(await http.post(flowTrigger(project), body, { bearer: token })).toMatchObject({
        status: 403,
        body: { error: 'External API access is disabled for this project' },
      });
      expect(await http.post(`/v1/orgs/${project.orgId}/automations/${project.projectId}/trigger`, {}, { bearer: token })).toMatchObject({
        status: 403,
        body: { error: 'External API access is disabled for this project' },
      });
      expect((await http.patch(settings, { externalApiEnabled: true }, { bearer: project.ownerJwt })).status).toBe(200);
      expect((await http.post(flowTrigger(project), body, { bearer: token })).status).toBe(PASSED_PIPELINE);
    });
  });

  describe('scope', () => {
    it('403 Insufficient token scope, checked after the project type', async () => {
      const botOnly = (await issueToken(http, chatbot, ['bot:invoke'])).token;
      expect(await http.post(flowTrigger(chatbot), body, { bearer: botOnly })).toMatchObject({ status: 403, body: { error: 'Insufficient token scope' } });
      // An automation project's token never has bot:invoke: the wrong type is what it hears.
      expect(await http.post(`/v1/orgs/${automation.orgId}/bots/${automation.projectId}/message`, {}, { bearer: automationToken })).toMatchObject({
        status: 400,
        body: { error: 'Bot message API is only available for chatbot projects' },
      });
      expect(await http.post(`/v1/orgs/${automation.orgId}/flows/${automation.projectId}/trigger`, body, { bearer: automationToken })).toMatchObject({
        status: 400,
        body: { error: 'Automation projects must use the automation trigger API' },
      });
    });
  });

  describe('project type', () => {
    it('400 on the bot endpoints for an automation project', async () => {
      const token = (await issueToken(http, automation, ['bot:invoke'])).token;
      for (const endpoint of ['message', 'invoke']) {
        expect(await http.post(`/v1/orgs/${automation.orgId}/bots/${automation.projectId}/${endpoint}`, {}, { bearer: token })).toMatchObject({
          status: 400,
          body: { error: 'Bot message API is only available for chatbot projects' },
        });
      }
    });

    it('400 on the automation endpoints for a chatbot project', async () => {
      const token = (await issueToken(http, chatbot, ['automation:trigger'])).token;
      for (const endpoint of ['trigger', 'trigger-async']) {
        expect(await http.post(`/v1/orgs/${chatbot.orgId}/automations/${chatbot.projectId}/${endpoint}`, {}, { bearer: token })).toMatchObject({
          status: 400,
          body: { error: 'Automation trigger API is only available for automation projects' },
        });
      }
    });

    it('400 on the flow endpoints for an automation project holding a flow:trigger token', async () => {
      // The console never issues flow:trigger for automation projects; a token from before that
      // rule (written here directly) still meets the spec's message.
      const issued = await issueToken(http, automation, ['automation:trigger']);
      await sql(`UPDATE gateway.api_tokens SET scopes = '{flow:trigger}' WHERE id = $1`, [issued.id]);
      for (const endpoint of ['trigger', 'trigger-async']) {
        expect(await http.post(`/v1/orgs/${automation.orgId}/flows/${automation.projectId}/${endpoint}`, body, { bearer: issued.token })).toMatchObject({
          status: 400,
          body: { error: 'Automation projects must use the automation trigger API' },
        });
      }
    });
  });

  describe('body', () => {
    it('400 naming the field that is wrong', async () => {
      expect(await http.post(flowTrigger(chatbot), { ...body, customerId: 42 }, { bearer: flowToken })).toMatchObject({
        status: 400,
        body: { error: 'customerId must be a string' },
      });
      expect(await http.post(flowTrigger(chatbot), { ...body, dryRun: 'yes' }, { bearer: flowToken })).toMatchObject({
        status: 400,
        body: { error: 'dryRun must be a boolean value' },
      });
      expect(await http.post(`/v1/orgs/${automation.orgId}/automations/${automation.projectId}/trigger`, { payload: 'x' }, { bearer: automationToken })).toMatchObject({
        status: 400,
        body: { error: 'payload must be an object' },
      });
      expect(await http.post(`/v1/orgs/${chatbot.orgId}/flows/${chatbot.projectId}/trigger-async`, { ...body, webhookUrl: 'http://example.com/hook' }, { bearer: flowToken })).toMatchObject({
        status: 400,
        body: { error: 'webhookUrl must be an https URL' },
      });
    });

    it('400 for a body that is not JSON or not an object, after the token checks', async () => {
      expect(await http.post(flowTrigger(chatbot), undefined, { rawBody: '{"event":', bearer: flowToken })).toMatchObject({
        status: 400,
        body: { error: 'Request body must be valid JSON' },
      });
      expect(await http.post(flowTrigger(chatbot), [1, 2], { bearer: flowToken })).toMatchObject({
        status: 400,
        body: { error: 'Request body must be a JSON object' },
      });
      expect(await http.post(flowTrigger(chatbot), undefined, { rawBody: '{"event":' })).toMatchObject({
        status: 401,
        body: { error: 'Missing API token' },
      });
    });

    it('413 for an oversized body, refused before it is read further (so before the token checks too)', async () => {
      const huge = { ...body, blob: 'x'.repeat(1024 * 1024 + 10) };
      expect(await http.post(flowTrigger(chatbot), huge, { bearer: flowToken })).toMatchObject({
        status: 413,
        body: { error: 'Request body too large' },
      });
      expect(await http.post(flowTrigger(chatbot), huge)).toMatchObject({ status: 413, body: { error: 'Request body too large' } });
    });

    it('415 for a body that is not JSON, after the token checks', async () => {
      const form = { rawBody: 'event=x', headers: { 'content-type': 'application/x-www-form-urlencoded' } };
      expect(await http.post(flowTrigger(chatbot), undefined, { ...form, bearer: flowToken })).toMatchObject({
        status: 415,
        body: { error: 'Request body must be JSON (Content-Type: application/json)' },
      });
      expect(await http.post(flowTrigger(chatbot), undefined, form)).toMatchObject({ status: 401, body: { error: 'Missing API token' } });
    });

    it('accepts JSON with a charset and +json types', async () => {
      const headers = { 'content-type': 'application/json; charset=utf-8' };
      expect((await http.post(flowTrigger(chatbot), undefined, { rawBody: JSON.stringify(body), headers, bearer: flowToken })).status).toBe(PASSED_PIPELINE);
      const vendor = { 'content-type': 'application/vnd.runline+json' };
      expect((await http.post(flowTrigger(chatbot), undefined, { rawBody: JSON.stringify(body), headers: vendor, bearer: flowToken })).status).toBe(PASSED_PIPELINE);
    });
  });

  describe('every response', () => {
    it('carries a request id, and keeps a sane one the caller sent', async () => {
      const answers = [
        await http.post(flowTrigger(chatbot), body, { bearer: flowToken }),
        await http.post(flowTrigger(chatbot), body),
        await http.post('/v9/orgs/x/flows/y/trigger', body),
        await http.get('/health/live'),
        await http.get('/no/such/route'),
      ];
      for (const answer of answers) expect(answer.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
      const echoed = await http.post(flowTrigger(chatbot), body, { bearer: flowToken, headers: { 'x-request-id': 'client-req-1' } });
      expect(echoed.headers.get('x-request-id')).toBe('client-req-1');
      const refused = await http.post(flowTrigger(chatbot), body, { bearer: flowToken, headers: { 'x-request-id': 'bad id with spaces' } });
      expect(refused.headers.get('x-request-id')).not.toBe('bad id with spaces');
    });

    it('shapes errors as {error} even for unknown routes', async () => {
      expect(await http.get('/no/such/route')).toMatchObject({ status: 404, body: { error: 'Not found' } });
    });
  });

  describe('lastUsedAt', () => {
    it('is shown after a call without a write per call', async () => {
      const issued = await issueToken(http, chatbot, ['flow:trigger']);
      const list = () => http.get<{ data: Array<{ id: string; lastUsedAt: string | null }> }>(`/v1/orgs/${chatbot.orgId}/projects/${chatbot.projectId}/api-tokens`, { bearer: chatbot.ownerJwt });
      expect((await list()).body.data.find((t) => t.id === issued.id)?.lastUsedAt).toBeNull();
      const before = Date.now();
      await http.post(flowTrigger(chatbot), body, { bearer: issued.token });
      await http.post(flowTrigger(chatbot), body, { bearer: issued.token });
      const shown = (await list()).body.data.find((t) => t.id === issued.id)?.lastUsedAt;
      expect(new Date(shown!).getTime()).toBeGreaterThanOrEqual(before - 5);
      // Not yet in the database: uses are written in batches, not per call.
      const [row] = await sql(`SELECT last_used_at FROM gateway.api_tokens WHERE id = $1`, [issued.id]);
      expect(row.last_used_at).toBeNull();
    });
  });

  async function tokenReads(): Promise<number> {
    const metrics = await http.get<string>('/metrics');
    const line = metrics.body.split('\n').find((l) => l.startsWith('runline_gateway_access_reads_total{') && l.includes('kind="token"'));
    return line ? Number(line.split(' ').pop()) : 0;
  }
});
