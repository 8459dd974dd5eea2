import { deadLetterService } from '@runline/dead-letter-service';
import { gatewayService } from '@runline/gateway-service';
import { invocationService } from '@runline/invocation-service';
import { pollingService } from '@runline/polling-service';
import { schedulerService } from '@runline/scheduler-service';
import { consoleJwt, HttpClient, startTestSystem, type TestSystem } from '@runline/testing';
import { createProject, createPublishedProject, issueToken, type ProjectFixture } from './gateway-fixtures.js';

/**
 * The security matrix of the dashboard API (DESIGN section 5, issue 17): every console route
 * added for the dashboard, called without a JWT (401), with the JWT of someone who is not a
 * member of the organization (404, whatever exists), as a VIEWER where the route changes
 * something (403), and with an API token (refused). And one secret, sent in a run's payload
 * and typed into a template, that no dashboard answer may carry.
 */
describe('dashboard API security', () => {
  let system: TestSystem;
  let http: HttpClient;
  let project: ProjectFixture;
  let token: string;
  let invocationId: string;
  const viewer = consoleJwt('dashboard-viewer');
  const outsider = consoleJwt('dashboard-outsider');
  const SECRET = 'whsec_DashboardMatrixSecret42';
  const NO_ID = '00000000-0000-4000-8000-000000000000';

  beforeAll(async () => {
    system = await startTestSystem([gatewayService, invocationService, schedulerService, pollingService, deadLetterService]);
    http = new HttpClient(system.url('gateway'));
    project = await createPublishedProject(http, 'CHATBOT');
    await http.post(`/v1/orgs/${project.orgId}/members`, { userId: 'dashboard-viewer', role: 'VIEWER' }, { bearer: project.ownerJwt });
    // The outsider has an organization and a project of their own: being signed in is not enough.
    await createProject(http, 'CHATBOT').then((own) => http.post(`/v1/orgs/${own.orgId}/members`, { userId: 'dashboard-outsider', role: 'OWNER' }, { bearer: own.ownerJwt }));
    token = (await issueToken(http, project, ['flow:trigger'])).token;
    const run = await http.post<{ invocationId: string }>(
      `/v1/orgs/${project.orgId}/flows/${project.projectId}/trigger`,
      { event: 'order.created', customerId: 'c-1', orderId: 'o-1', webhookSecret: SECRET },
      { bearer: token },
    );
    expect(run.status).toBe(200);
    invocationId = run.body.invocationId;
  });
  afterAll(() => system?.stop());

  const org = () => `/v1/orgs/${project.orgId}`;
  const base = () => `${org()}/projects/${project.projectId}`;

  /**
   * [method, path, body, changes something, how an API token is refused (null: the token route
   * itself answers), the 401 without any credential].
   */
  type Route = [string, () => string, unknown, boolean, { status: number; error: string } | null, string];
  const consoleTokenRefusal = { status: 401, error: 'Invalid or expired console token' };
  const dashboardOnlyRefusal = { status: 403, error: 'Unauthorized' };
  const noJwt = 'Missing console token';
  // The paths a token route shares: without any credential the token route answers.
  const noToken = 'Missing API token';
  const routes: Route[] = [
    ['GET', () => `${org()}/plan`, undefined, false, consoleTokenRefusal, noJwt],
    ['GET', () => `${org()}/projects`, undefined, false, consoleTokenRefusal, noJwt],
    ['GET', () => base(), undefined, false, consoleTokenRefusal, noJwt],
    ['GET', () => `${base()}/definition?stage=published`, undefined, false, consoleTokenRefusal, noJwt],
    // Refused to everyone here (an outsider, a VIEWER, an API token, no JWT): the project stays.
    ['DELETE', () => base(), undefined, true, consoleTokenRefusal, noJwt],
    ['GET', () => `${org()}/external-invocations/logs`, undefined, false, dashboardOnlyRefusal, noJwt],
    ['GET', () => `${org()}/external-invocations/metrics`, undefined, false, dashboardOnlyRefusal, noJwt],
    ['PATCH', () => `${org()}/external-invocations/${invocationId}`, { action: 'approve' }, true, dashboardOnlyRefusal, noToken],
    ['GET', () => `${org()}/external-invocations/${invocationId}`, undefined, false, null, noToken],
    ['GET', () => `${base()}/polling-triggers`, undefined, false, consoleTokenRefusal, noJwt],
    ['POST', () => `${base()}/polling-triggers`, { pollKey: 'k', pollEndpoint: 'https://example.com/items', source: 's' }, true, consoleTokenRefusal, noJwt],
    ['GET', () => `${base()}/polling-triggers/k`, undefined, false, consoleTokenRefusal, noJwt],
    ['DELETE', () => `${base()}/polling-triggers/k`, undefined, true, consoleTokenRefusal, noJwt],
    ['GET', () => `${base()}/dead-letters`, undefined, false, consoleTokenRefusal, noJwt],
    ['POST', () => `${base()}/dead-letters/${NO_ID}/replay`, undefined, true, consoleTokenRefusal, noJwt],
    ['POST', () => `${base()}/dead-letters/replay`, { filter: {}, dryRun: true }, true, consoleTokenRefusal, noJwt],
    ['GET', () => `${base()}/templates`, undefined, false, consoleTokenRefusal, noJwt],
    ['POST', () => `${base()}/templates`, { name: 't', endpoint: 'flows.trigger', body: {} }, true, consoleTokenRefusal, noJwt],
    ['GET', () => `${base()}/templates/${NO_ID}`, undefined, false, consoleTokenRefusal, noJwt],
    ['PUT', () => `${base()}/templates/${NO_ID}`, { name: 't', endpoint: 'flows.trigger', body: {} }, true, consoleTokenRefusal, noJwt],
    ['DELETE', () => `${base()}/templates/${NO_ID}`, undefined, true, consoleTokenRefusal, noJwt],
    ['GET', () => `${base()}/request-example?endpoint=flows.trigger`, undefined, false, consoleTokenRefusal, noJwt],
    ['GET', () => `${base()}/webhooks`, undefined, false, consoleTokenRefusal, noJwt],
    ['POST', () => `${base()}/webhooks`, { name: 'orders' }, true, consoleTokenRefusal, noJwt],
    ['DELETE', () => `${base()}/webhooks/${NO_ID}`, undefined, true, consoleTokenRefusal, noJwt],
    ['GET', () => `${base()}/webhook-subscriptions`, undefined, false, consoleTokenRefusal, noJwt],
    ['POST', () => `${base()}/webhook-subscriptions`, { provider: 'stripe', events: 'charge.succeeded', credentials: { secretKey: 'sk_test_0123456789abcdef' } }, true, consoleTokenRefusal, noJwt],
    ['POST', () => `${base()}/webhook-subscriptions/${NO_ID}/retry`, undefined, true, consoleTokenRefusal, noJwt],
    ['DELETE', () => `${base()}/webhook-subscriptions/${NO_ID}`, undefined, true, consoleTokenRefusal, noJwt],
  ];

  it('GET /v1/orgs: 401 without a JWT, 401 with an API token', async () => {
    expect(await http.get('/v1/orgs')).toMatchObject({ status: 401, body: { error: 'Missing console token' } });
    expect(await http.get('/v1/orgs', { bearer: token })).toMatchObject({ status: 401, body: { error: 'Invalid or expired console token' } });
  });

  it.each(routes)('%s %s: 401 without a JWT', async (method, path, body, _changes, _refusal, missing) => {
    expect(await http.request(method, path(), { body })).toMatchObject({ status: 401, body: { error: missing } });
  });

  it.each(routes)('%s %s: 404 for a signed-in user who is not a member', async (method, path, body) => {
    const answer = await http.request(method, path(), { body, bearer: outsider });
    expect(answer.status).toBe(404);
    expect(answer.body.error).toMatch(/^(Organization|Project|Invocation) not found$/);
  });

  it.each(routes.filter((route) => route[3]))('%s %s: 403 for a VIEWER', async (method, path, body) => {
    const answer = await http.request(method, path(), { body, bearer: viewer });
    expect(answer.status).toBe(403);
  });

  it.each(routes.filter((route) => route[4] !== null))('%s %s: an API token is refused', async (method, path, body, _changes, refusal) => {
    expect(await http.request(method, path(), { body, bearer: token })).toMatchObject({ status: refusal!.status, body: { error: refusal!.error } });
  });

  it('no dashboard answer carries a secret from a payload or a template', async () => {
    const template = await http.post<{ id: string }>(
      `${base()}/templates`,
      { name: 'with a secret', endpoint: 'flows.trigger', body: { event: 'e', customerId: 'c', webhookSecret: SECRET } },
      { bearer: project.ownerJwt },
    );
    const answers = [
      await http.get(`${org()}/external-invocations/logs`, { bearer: viewer }),
      await http.get(`${org()}/external-invocations/metrics`, { bearer: viewer }),
      await http.get(`${org()}/external-invocations/${invocationId}`, { bearer: viewer }),
      await http.get(`${base()}/templates`, { bearer: viewer }),
      await http.get(`${base()}/request-example?endpoint=flows.trigger${template.status === 201 ? `&templateId=${template.body.id}` : ''}`, { bearer: viewer }),
    ];
    for (const answer of answers) {
      expect(answer.status).toBe(200);
      expect(JSON.stringify(answer.body)).not.toContain(SECRET);
    }
    // The run really carried it (redacted), so the check above is not vacuous.
    expect(JSON.stringify(answers[2]!.body)).toContain('webhookSecret');
  });
});
