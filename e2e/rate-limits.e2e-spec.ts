import { gatewayService } from '@runline/gateway-service';
import { deadLetterService } from '@runline/dead-letter-service';
import { invocationService } from '@runline/invocation-service';
import { pollingService } from '@runline/polling-service';
import { consoleJwt, HttpClient, queryDatabase, startTestSystem, type HttpResult, type TestSystem } from '@runline/testing';
import { createPublishedProject, issueToken, type ProjectFixture } from './gateway-fixtures.js';
import { invocationPath, runPath, type Json, type RunEndpoint } from './support/runs-support.js';

/**
 * Per-token rate limits over HTTP (spec "Limits / Rate limit"): the X-RateLimit headers, one
 * counter per token and endpoint, the window, the precedence of project, plan and default,
 * and the endpoints that are not limited.
 */
const FLOW_BODY = { event: 'order.created', customerId: 'c-1', orderId: '42' };
const DRY_RUN = { ...FLOW_BODY, dryRun: true };
const ADMIN = consoleJwt('rate-limit-admin', { roles: ['platform-admin'] });

describe('rate limits', () => {
  let system: TestSystem;
  let http: HttpClient;
  const sql = (query: string, parameters: unknown[] = []) => queryDatabase(system.database.url, query, parameters);

  beforeAll(async () => {
    // Zero TTL: settings and plan changes made in a test apply to the gateway's next call.
    system = await startTestSystem([gatewayService, invocationService, pollingService, deadLetterService], { environment: { ACCESS_CACHE_TTL_MS: '0' } });
    http = new HttpClient(system.url('gateway'));
  });
  afterAll(() => system?.stop());

  async function chatbot(settings?: { rateLimitPerMinute?: number | null; rateLimitWindowMs?: number | null }) {
    const project = await createPublishedProject(http, 'CHATBOT');
    const token = (await issueToken(http, project, ['bot:invoke', 'flow:trigger'])).token;
    if (settings) await setSettings(project, settings);
    return { project, token };
  }
  async function setSettings(project: ProjectFixture, settings: { rateLimitPerMinute?: number | null; rateLimitWindowMs?: number | null }) {
    const answer = await http.patch(`/v1/orgs/${project.orgId}/projects/${project.projectId}/api-settings`, settings, { bearer: project.ownerJwt });
    expect(answer.status).toBe(200);
  }
  async function setPlan(orgId: string, plan: { rateLimitPerMinute: number | null; rateLimitWindowMs: number | null; monthlyQuota?: number | null }) {
    const answer = await http.put(`/v1/orgs/${orgId}/plan`, { monthlyQuota: null, renewalDay: null, ...plan }, { bearer: ADMIN });
    expect(answer.status).toBe(200);
  }
  const post = (endpoint: RunEndpoint, project: ProjectFixture, token: string, body: unknown = DRY_RUN) =>
    http.post<Json>(runPath(endpoint, project), body, { bearer: token });
  const limits = (answer: HttpResult<Json>) => ({
    limit: answer.headers.get('x-ratelimit-limit'),
    remaining: answer.headers.get('x-ratelimit-remaining'),
    reset: answer.headers.get('x-ratelimit-reset'),
  });
  const runsOf = async (projectId: string) => Number((await sql('SELECT count(*) AS n FROM invocation.invocations WHERE project_id = $1', [projectId]))[0]!.n);

  it('puts X-RateLimit-Limit, -Remaining and -Reset (unix seconds) on every answer once the token is known', async () => {
    const { project, token } = await chatbot();
    const before = Math.floor(Date.now() / 1000);
    const ok = await post('flowTrigger', project, token);
    expect(ok.status).toBe(200);
    expect(limits(ok)).toEqual({ limit: '120', remaining: '119', reset: expect.stringMatching(/^\d+$/) });
    const reset = Number(ok.headers.get('x-ratelimit-reset'));
    expect(reset).toBeGreaterThan(before);
    expect(reset).toBeLessThanOrEqual(before + 61);

    // A refused body (400) and a failed trigger check (500) carry them too, and count.
    const badSchedule = await post('flowTriggerAsync', project, token, { ...FLOW_BODY, runAt: 'x', delaySeconds: 1 });
    expect(badSchedule).toMatchObject({ status: 400, body: { error: 'Provide either runAt or delaySeconds, not both' } });
    expect(limits(badSchedule)).toMatchObject({ limit: '120', remaining: '119' });
    const failed = await post('flowTrigger', project, token, { event: 'order.created' });
    expect(failed.status).toBe(500);
    expect(limits(failed)).toMatchObject({ limit: '120', remaining: '118' });
    const bot = await post('botMessage', project, token, { message: 'hi', userName: 'Ann' });
    expect(bot.status).toBe(200);
    expect(limits(bot)).toMatchObject({ limit: '120', remaining: '119' });

    // Before the token is known there is nothing to count against.
    const anonymous = await http.post(runPath('flowTrigger', project), DRY_RUN);
    expect(anonymous).toMatchObject({ status: 401, body: { error: 'Missing API token' } });
    expect(anonymous.headers.get('x-ratelimit-limit')).toBeNull();
  });

  it('refuses the request over the limit with 429 Rate limit exceeded and Retry-After; nothing runs', async () => {
    const { project, token } = await chatbot({ rateLimitPerMinute: 2, rateLimitWindowMs: 60_000 });
    expect((await post('flowTriggerAsync', project, token, FLOW_BODY)).status).toBe(202);
    expect((await post('flowTriggerAsync', project, token, FLOW_BODY)).status).toBe(202);
    expect(await runsOf(project.projectId)).toBe(2);

    const refused = await post('flowTriggerAsync', project, token, FLOW_BODY);
    expect(refused.status).toBe(429);
    // Exactly the spec's body: no quota object (that is how it differs from the quota's 429).
    expect(refused.body).toEqual({ error: 'Rate limit exceeded' });
    expect(limits(refused)).toMatchObject({ limit: '2', remaining: '0' });
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(refused.headers.get('x-quota-limit')).toBeNull();
    expect(await runsOf(project.projectId)).toBe(2);
  });

  it('keeps one counter per token and per endpoint: sync and async do not share one', async () => {
    const { project, token } = await chatbot({ rateLimitPerMinute: 1 });
    const other = (await issueToken(http, project, ['bot:invoke', 'flow:trigger'])).token;
    expect((await post('flowTrigger', project, token)).status).toBe(200);
    expect((await post('flowTrigger', project, token)).status).toBe(429);

    const async = await post('flowTriggerAsync', project, token, { ...DRY_RUN });
    expect(async.status).toBe(200);
    expect(limits(async)).toMatchObject({ limit: '1', remaining: '0' });
    expect((await post('flowTriggerAsync', project, token)).status).toBe(429);
    expect((await post('botMessage', project, token, { message: 'hi' })).status).toBe(200);
    expect((await post('botInvoke', project, token, { message: 'hi' })).status).toBe(202);
    expect((await post('botMessage', project, token, { message: 'hi' })).status).toBe(429);
    // Another token of the same project has counters of its own.
    expect((await post('flowTrigger', project, other)).status).toBe(200);

    const automation = await createPublishedProject(http, 'AUTOMATION');
    const automationToken = (await issueToken(http, automation, ['automation:trigger'])).token;
    await setSettings(automation, { rateLimitPerMinute: 1 });
    const automationBody = { event: 'order.created', payload: { orderId: 'o-1', amount: 1 }, dryRun: true };
    expect((await post('automationTrigger', automation, automationToken, automationBody)).status).toBe(200);
    expect((await post('automationTriggerAsync', automation, automationToken, automationBody)).status).toBe(200);
    expect((await post('automationTrigger', automation, automationToken, automationBody)).status).toBe(429);
    expect((await post('automationTriggerAsync', automation, automationToken, automationBody)).status).toBe(429);
  });

  it('starts counting again when the window resets', async () => {
    const { project, token } = await chatbot({ rateLimitPerMinute: 1, rateLimitWindowMs: 1000 });
    // Start at the beginning of a window, so the two calls below share it.
    const first = await post('flowTrigger', project, token);
    const reset = Number(first.headers.get('x-ratelimit-reset'));
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, reset * 1000 - Date.now()) + 50));
    const fresh = await post('flowTrigger', project, token);
    expect(fresh.status).toBe(200);
    expect(limits(fresh)).toMatchObject({ limit: '1', remaining: '0' });
    const refused = await post('flowTrigger', project, token);
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toBe('1');
    const freshReset = Number(refused.headers.get('x-ratelimit-reset'));
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, freshReset * 1000 - Date.now()) + 50));
    const again = await post('flowTrigger', project, token);
    expect(again.status).toBe(200);
    expect(Number(again.headers.get('x-ratelimit-reset'))).toBeGreaterThanOrEqual(freshReset + 1);
  });

  it('takes the project setting first, then the plan, then the default of 120 per 60 s', async () => {
    const { project, token } = await chatbot();
    // Windows are cut at multiples of their length since the epoch, so the reset tells the window.
    const probe = async () => {
      const answer = await post('flowTrigger', project, token);
      expect(answer.status).toBe(200);
      return { limit: Number(answer.headers.get('x-ratelimit-limit')), reset: Number(answer.headers.get('x-ratelimit-reset')) };
    };
    const byDefault = await probe();
    expect(byDefault.limit).toBe(120);
    expect(byDefault.reset % 60).toBe(0);

    await setPlan(project.orgId, { rateLimitPerMinute: 50, rateLimitWindowMs: 7000 });
    const byPlan = await probe();
    expect(byPlan.limit).toBe(50);
    expect(byPlan.reset % 7).toBe(0);

    await setSettings(project, { rateLimitPerMinute: 40 });
    const limitByProject = await probe();
    expect(limitByProject.limit).toBe(40);
    expect(limitByProject.reset % 7).toBe(0); // the window still comes from the plan

    await setSettings(project, { rateLimitWindowMs: 13_000 });
    const both = await probe();
    expect(both.limit).toBe(40);
    expect(both.reset % 13).toBe(0);

    await setSettings(project, { rateLimitPerMinute: null, rateLimitWindowMs: null });
    expect(await probe()).toEqual({ limit: 50, reset: expect.any(Number) });
    await setPlan(project.orgId, { rateLimitPerMinute: null, rateLimitWindowMs: null });
    expect((await probe()).limit).toBe(120);
  });

  it('does not limit the invocation, polling and dead-letter endpoints, nor put the headers on them', async () => {
    const { project, token } = await chatbot({ rateLimitPerMinute: 1 });
    const accepted = await post('flowTriggerAsync', project, token, FLOW_BODY);
    expect(accepted.status).toBe(202);
    expect((await post('flowTriggerAsync', project, token, FLOW_BODY)).status).toBe(429);
    for (let i = 0; i < 5; i++) {
      const read = await http.get<Json>(invocationPath(project.orgId, String(accepted.body.invocationId)), { bearer: token });
      expect(read.status).toBe(200);
      expect(read.headers.get('x-ratelimit-limit')).toBeNull();
      const modify = await http.patch<Json>(invocationPath(project.orgId, String(accepted.body.invocationId)), { action: 'cancel' }, { bearer: token });
      expect(modify.status).toBe(409);
      expect(modify.headers.get('x-ratelimit-limit')).toBeNull();
      const flows = `/v1/orgs/${project.orgId}/flows/${project.projectId}`;
      for (const path of [`${flows}/polling`, `${flows}/dead-letters`]) {
        const listed = await http.get<Json>(path, { bearer: token });
        expect(listed.status).toBe(200);
        expect(listed.headers.get('x-ratelimit-limit')).toBeNull();
      }
    }
  });
});
