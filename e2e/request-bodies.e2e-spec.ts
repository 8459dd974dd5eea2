import { gatewayService } from '@runline/gateway-service';
import { invocationService } from '@runline/invocation-service';
import { consoleJwt, HttpClient, startTestSystem, type TestSystem } from '@runline/testing';
import { createPublishedProject, issueToken, type ProjectFixture } from './gateway-fixtures.js';

/**
 * Bodies that are JSON but not an object, or nested deeper than any payload needs, are refused
 * with 400 on every route that takes a body, before any validation library walks them (a body
 * nested 4,000 levels deep used to overflow class-transformer's stack: 500).
 */
describe('request bodies on every route that takes one', () => {
  let system: TestSystem;
  let http: HttpClient;
  let chatbot: ProjectFixture;
  let automation: ProjectFixture;
  let chatbotToken: string;
  let automationToken: string;
  const admin = consoleJwt('bodies-admin', { roles: ['platform-admin'] });

  beforeAll(async () => {
    system = await startTestSystem([gatewayService, invocationService]);
    http = new HttpClient(system.url('gateway'));
    chatbot = await createPublishedProject(http, 'CHATBOT');
    automation = await createPublishedProject(http, 'AUTOMATION');
    chatbotToken = (await issueToken(http, chatbot, ['flow:trigger', 'bot:invoke'])).token;
    automationToken = (await issueToken(http, automation, ['automation:trigger'])).token;
  });
  afterAll(() => system?.stop());

  const deepObject = '{"a":'.repeat(10_000) + '1' + '}'.repeat(10_000);
  const deepArray = '['.repeat(10_000) + ']'.repeat(10_000);
  const bodies: Array<[string, string, string]> = [
    ['an object nested 10,000 levels', deepObject, 'Request body is nested too deeply (at most 64 levels)'],
    ['an array nested 10,000 levels', deepArray, 'Request body is nested too deeply (at most 64 levels)'],
    ['null', 'null', 'Request body must be a JSON object'],
    ['an array', '[]', 'Request body must be a JSON object'],
    ['a string', '"x"', 'Request body must be a JSON object'],
    ['a number', '1', 'Request body must be a JSON object'],
    ['true', 'true', 'Request body must be a JSON object'],
    // PostgreSQL stores no NUL in text or jsonb: the openapi fuzz found `{"name":"\u0000"}` answered 500.
    ['a NUL in a string', '{"name":"a\\u0000b","event":"x"}', 'Request body must not contain the NUL character (\\u0000)'],
    ['a NUL in a key', '{"\\u0000":1}', 'Request body must not contain the NUL character (\\u0000)'],
  ];
  const routes = (): Array<[string, string, () => string]> => [
    ['POST', `/v1/orgs/${chatbot.orgId}/bots/${chatbot.projectId}/message`, () => chatbotToken],
    ['POST', `/v1/orgs/${chatbot.orgId}/bots/${chatbot.projectId}/invoke`, () => chatbotToken],
    ['POST', `/v1/orgs/${chatbot.orgId}/flows/${chatbot.projectId}/trigger`, () => chatbotToken],
    ['POST', `/v1/orgs/${chatbot.orgId}/flows/${chatbot.projectId}/trigger-async`, () => chatbotToken],
    ['POST', `/v1/orgs/${automation.orgId}/automations/${automation.projectId}/trigger`, () => automationToken],
    ['POST', `/v1/orgs/${automation.orgId}/automations/${automation.projectId}/trigger-async`, () => automationToken],
    ['POST', `/v1/orgs/${chatbot.orgId}/flows/${chatbot.projectId}/polling`, () => chatbotToken],
    ['POST', `/v1/orgs/${chatbot.orgId}/flows/${chatbot.projectId}/dead-letters`, () => chatbotToken],
    ['POST', `/v1/orgs/${automation.orgId}/automations/${automation.projectId}/dead-letters`, () => automationToken],
    ['PATCH', `/v1/orgs/${chatbot.orgId}/external-invocations/00000000-0000-4000-8000-000000000000`, () => chatbotToken],
    ['POST', '/v1/orgs', () => chatbot.ownerJwt],
    ['PUT', `/v1/orgs/${chatbot.orgId}/plan`, () => admin],
    ['POST', `/v1/orgs/${chatbot.orgId}/members`, () => chatbot.ownerJwt],
    ['POST', `/v1/orgs/${chatbot.orgId}/projects`, () => chatbot.ownerJwt],
    ['PUT', `/v1/orgs/${chatbot.orgId}/projects/${chatbot.projectId}/definition`, () => chatbot.ownerJwt],
    ['PATCH', `/v1/orgs/${chatbot.orgId}/projects/${chatbot.projectId}/api-settings`, () => chatbot.ownerJwt],
    ['POST', `/v1/orgs/${chatbot.orgId}/projects/${chatbot.projectId}/api-tokens`, () => chatbot.ownerJwt],
  ];

  it.each(bodies)('%s: 400 with its message on every body route', async (_what, raw, message) => {
    for (const [method, path, bearer] of routes()) {
      const answer = await http.request(method, path, { rawBody: raw, bearer: bearer(), headers: { 'content-type': 'application/json' } });
      expect({ route: `${method} ${path}`, status: answer.status, body: answer.body }).toEqual({ route: `${method} ${path}`, status: 400, body: { error: message } });
    }
  });

  it('a NUL in a query parameter (a search, a filter, a key): 400 with its message, after the guards', async () => {
    const message = 'Query parameters must not contain the NUL character (\\u0000)';
    const queries: Array<[string, string, () => string]> = [
      ['GET', `/v1/orgs/${chatbot.orgId}/external-invocations/logs?q=a%00b`, () => chatbot.ownerJwt],
      ['GET', `/v1/orgs/${chatbot.orgId}/flows/${chatbot.projectId}/dead-letters?source=%00`, () => chatbotToken],
      ['GET', `/v1/orgs/${automation.orgId}/automations/${automation.projectId}/dead-letters?source=crm%00`, () => automationToken],
      ['GET', `/v1/orgs/${chatbot.orgId}/flows/${chatbot.projectId}/polling?pollKey=%00`, () => chatbotToken],
      ['DELETE', `/v1/orgs/${chatbot.orgId}/flows/${chatbot.projectId}/polling?pollKey=%00`, () => chatbotToken],
      ['GET', `/v1/orgs/${chatbot.orgId}/projects/${chatbot.projectId}/polling-triggers?pollKey=%00`, () => chatbot.ownerJwt],
    ];
    for (const [method, path, bearer] of queries) {
      const answer = await http.request(method, path, { bearer: bearer() });
      expect({ route: `${method} ${path}`, status: answer.status, body: answer.body }).toEqual({ route: `${method} ${path}`, status: 400, body: { error: message } });
    }
    // Who may call the route is answered first.
    const stranger = await http.request('GET', `/v1/orgs/${chatbot.orgId}/flows/${chatbot.projectId}/dead-letters?source=%00`, { bearer: 'rl_ext_nope' });
    expect(stranger).toMatchObject({ status: 401, body: { error: 'Invalid API token' } });
  });

  it('the body step keeps its place: a deep body with a wrong token is still 401', async () => {
    const answer = await http.request('POST', routes()[2]![1], { rawBody: deepObject, bearer: 'rl_ext_nope', headers: { 'content-type': 'application/json' } });
    expect(answer).toMatchObject({ status: 401, body: { error: 'Invalid API token' } });
  });
});
