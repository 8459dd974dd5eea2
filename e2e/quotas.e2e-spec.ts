import pg from 'pg';
import { gatewayService } from '@runline/gateway-service';
import { invocationService } from '@runline/invocation-service';
import { schedulerService } from '@runline/scheduler-service';
import { consoleJwt, HttpClient, queryDatabase, startTestSystem, type HttpResult, type TestSystem } from '@runline/testing';
import { createPublishedProject, issueToken, type ProjectFixture } from './gateway-fixtures.js';
import { eventually, waitForFinalInvocation } from './support/lifecycle-support.js';
import { holdRowsAsTheyCome } from './support/row-locks.js';
import { runPath, type Json, type RunEndpoint } from './support/runs-support.js';

/**
 * Monthly plan quotas over HTTP (spec "Limits / Monthly quota"): the 429 and its headers, what
 * is not counted, exactness under concurrency, the renewal day, the 503 when the count cannot
 * be checked (the usage table really locked by another connection) and the re-check when a
 * scheduled run comes up.
 */
const FLOW_BODY = { event: 'order.created', customerId: 'c-1', orderId: '42', enrollmentPolicy: 'EVERY_MATCH' };
const ADMIN = consoleJwt('quota-admin', { roles: ['platform-admin'] });
const QUOTA_EXCEEDED = 'Monthly API call quota exceeded';

describe('monthly quotas', () => {
  let system: TestSystem;
  let http: HttpClient;
  const sql = (query: string, parameters: unknown[] = []) => queryDatabase(system.database.url, query, parameters);

  beforeAll(async () => {
    system = await startTestSystem([gatewayService, invocationService, schedulerService], { environment: { ACCESS_CACHE_TTL_MS: '0' } });
    http = new HttpClient(system.url('gateway'));
  });
  afterAll(() => system?.stop());

  async function chatbot(plan: { monthlyQuota: number | null; renewalDay?: number | null }, settings: Json = {}) {
    const project = await createPublishedProject(http, 'CHATBOT');
    const token = (await issueToken(http, project, ['bot:invoke', 'flow:trigger'])).token;
    await setPlan(project.orgId, plan);
    if (Object.keys(settings).length > 0) {
      const patched = await http.patch(`/v1/orgs/${project.orgId}/projects/${project.projectId}/api-settings`, settings, { bearer: project.ownerJwt });
      expect(patched.status).toBe(200);
    }
    return { project, token };
  }
  /** Sets the plan and waits until the invocation service's copy has it (it arrives as an event). */
  async function setPlan(orgId: string, plan: { monthlyQuota: number | null; renewalDay?: number | null }) {
    const answer = await http.put(
      `/v1/orgs/${orgId}/plan`,
      { rateLimitPerMinute: null, rateLimitWindowMs: null, renewalDay: null, ...plan },
      { bearer: ADMIN },
    );
    expect(answer.status).toBe(200);
    await eventually('the plan to reach the invocation service', async () => {
      const rows = await sql('SELECT monthly_quota, renewal_day FROM invocation.organization_copies WHERE org_id = $1', [orgId]);
      const row = rows[0];
      const quota = row?.monthly_quota === null || row?.monthly_quota === undefined ? null : Number(row.monthly_quota);
      return row && quota === plan.monthlyQuota && (row.renewal_day ?? null) === (plan.renewalDay ?? null) ? true : undefined;
    });
  }
  const post = (endpoint: RunEndpoint, project: ProjectFixture, token: string, body: unknown = FLOW_BODY, key?: string) =>
    http.post<Json>(runPath(endpoint, project), body, { bearer: token, headers: key ? { 'x-idempotency-key': key } : {} });
  const quotaHeaders = (answer: HttpResult<Json>) => ({
    limit: answer.headers.get('x-quota-limit'),
    used: answer.headers.get('x-quota-used'),
    remaining: answer.headers.get('x-quota-remaining'),
    periodStart: answer.headers.get('x-quota-period-start'),
  });
  const NO_QUOTA_HEADERS = { limit: null, used: null, remaining: null, periodStart: null };
  const runsOf = async (orgId: string) => Number((await sql('SELECT count(*) AS n FROM invocation.invocations WHERE org_id = $1', [orgId]))[0]!.n);
  const firstOfMonth = () => {
    const now = new Date();
    return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1)).toISOString();
  };

  it('answers 429 with quota {limit, used} and the X-Quota headers once the quota is used up; dry runs and replays are not counted', async () => {
    const { project, token } = await chatbot({ monthlyQuota: 2 });
    const dryRun = await post('flowTrigger', project, token, { ...FLOW_BODY, dryRun: true });
    expect(dryRun.status).toBe(200);
    const accepted = await post('flowTriggerAsync', project, token, FLOW_BODY, 'key-1');
    expect(accepted.status).toBe(202);
    expect(quotaHeaders(accepted)).toEqual(NO_QUOTA_HEADERS);
    const finished = await post('flowTrigger', project, token);
    expect(finished.body.status).toBe('SUCCEEDED');
    expect(quotaHeaders(finished)).toEqual(NO_QUOTA_HEADERS);

    const refused = await post('flowTriggerAsync', project, token);
    expect(refused.status).toBe(429);
    expect(refused.body).toEqual({ error: QUOTA_EXCEEDED, quota: { limit: 2, used: 2 } });
    expect(quotaHeaders(refused)).toEqual({ limit: '2', used: '2', remaining: '0', periodStart: firstOfMonth() });
    // The rate limit's headers are there too: the request was counted by it, then refused.
    expect(refused.headers.get('x-ratelimit-limit')).toBe('120');
    const bot = await post('botMessage', project, token, { message: 'hi' });
    expect(bot).toMatchObject({ status: 429, body: { error: QUOTA_EXCEEDED, quota: { limit: 2, used: 2 } } });

    // Still answered, and still not counted: a dry run, and a repeat of a used idempotency key.
    expect((await post('flowTrigger', project, token, { ...FLOW_BODY, dryRun: true })).status).toBe(200);
    const replay = await post('flowTriggerAsync', project, token, FLOW_BODY, 'key-1');
    expect(replay.body).toMatchObject({ invocationId: accepted.body.invocationId, idempotentReplay: true });
    expect(await runsOf(project.orgId)).toBe(2);
  });

  it('tells the two 429s apart by the quota object; a rate-limited request is not counted', async () => {
    const { project, token } = await chatbot({ monthlyQuota: 2 }, { rateLimitPerMinute: 1 });
    expect((await post('flowTriggerAsync', project, token)).status).toBe(202);
    const rateLimited = await post('flowTriggerAsync', project, token);
    expect(rateLimited).toMatchObject({ status: 429, body: { error: 'Rate limit exceeded' } });
    expect(rateLimited.body).not.toHaveProperty('quota');
    expect(quotaHeaders(rateLimited)).toEqual(NO_QUOTA_HEADERS);
    // The refused request took nothing: one run is left, on another endpoint's counter.
    expect((await post('flowTrigger', project, token)).status).toBe(200);
    const quota = await post('botInvoke', project, token, { message: 'hi' });
    expect(quota).toMatchObject({ status: 429, body: { error: QUOTA_EXCEEDED, quota: { limit: 2, used: 2 } } });
    expect(await runsOf(project.orgId)).toBe(2);
  });

  it('accepts exactly one of 50 concurrent requests when one run is left', async () => {
    const { project, token } = await chatbot({ monthlyQuota: 3 }, { rateLimitPerMinute: 1000 });
    for (let i = 0; i < 2; i++) expect((await post('flowTriggerAsync', project, token)).status).toBe(202);
    const answers = await Promise.all(Array.from({ length: 50 }, () => post('flowTriggerAsync', project, token)));
    expect(answers.filter((answer) => answer.status === 202)).toHaveLength(1);
    const refused = answers.filter((answer) => answer.status === 429);
    expect(refused).toHaveLength(49);
    for (const answer of refused) expect(answer.body).toEqual({ error: QUOTA_EXCEEDED, quota: { limit: 3, used: 3 } });
    expect(await runsOf(project.orgId)).toBe(3);
  });

  it('starts the period on the plan renewal day', async () => {
    const now = new Date();
    const renewalDay = Math.min(now.getUTCDate(), 28);
    const { project, token } = await chatbot({ monthlyQuota: 0, renewalDay });
    const refused = await post('flowTriggerAsync', project, token);
    expect(refused.status).toBe(429);
    expect(refused.body).toEqual({ error: QUOTA_EXCEEDED, quota: { limit: 0, used: 0 } });
    const periodStart = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), renewalDay)).toISOString();
    expect(quotaHeaders(refused)).toEqual({ limit: '0', used: '0', remaining: '0', periodStart });
  });

  it('answers 503 Unable to validate monthly API quota while the usage table cannot be locked, and records nothing', async () => {
    const { project, token } = await chatbot({ monthlyQuota: 10 });
    const holder = new pg.Client({ connectionString: system.database.url });
    await holder.connect();
    try {
      await holder.query('BEGIN');
      await holder.query('LOCK TABLE invocation.usage_counters IN ACCESS EXCLUSIVE MODE');
      for (const endpoint of ['flowTriggerAsync', 'flowTrigger'] as const) {
        const answer = await post(endpoint, project, token);
        expect(answer.status).toBe(503);
        expect(answer.body).toEqual({ error: 'Unable to validate monthly API quota' });
        expect(quotaHeaders(answer)).toEqual(NO_QUOTA_HEADERS);
      }
    } finally {
      await holder.query('ROLLBACK');
      await holder.end();
    }
    expect(await runsOf(project.orgId)).toBe(0);
    expect((await post('flowTriggerAsync', project, token)).status).toBe(202);
  });

  it('checks the quota again when a scheduled run comes up: used up, the run FAILS with that reason', async () => {
    const { project, token } = await chatbot({ monthlyQuota: 2 });
    // The job is held from the moment it is written (the scheduler's claim skips it) until the
    // plan has shrunk, so the run comes up after that however slow this machine is.
    const holding = holdRowsAsTheyCome(system.database.url, `SELECT name FROM scheduler.scheduled_jobs WHERE project_id = '${project.projectId}' FOR KEY SHARE`, 1, 15_000);
    const scheduled = await post('flowTriggerAsync', project, token, { ...FLOW_BODY, delaySeconds: 1 });
    expect(scheduled.body.status).toBe('SCHEDULED');
    const held = await holding;
    try {
      expect((await post('flowTriggerAsync', project, token)).status).toBe(202);
      // The plan shrinks before the run comes up: the two runs recorded now exceed it.
      await setPlan(project.orgId, { monthlyQuota: 1 });
    } finally {
      await held.release();
    }

    const done = await waitForFinalInvocation(http, project.orgId, String(scheduled.body.invocationId), token, 15_000);
    expect(done).toMatchObject({ status: 'FAILED', errorMessage: QUOTA_EXCEEDED, schedulerStatus: 'FIRED', steps: [] });
  });

  it('lets a scheduled run start when the quota has room for it', async () => {
    const { project, token } = await chatbot({ monthlyQuota: 1 });
    const scheduled = await post('flowTriggerAsync', project, token, { ...FLOW_BODY, delaySeconds: 1 });
    expect(scheduled.body.status).toBe('SCHEDULED');
    // It holds the only run of the period, and does not count against itself when it starts.
    expect((await post('flowTriggerAsync', project, token)).status).toBe(429);
    const done = await waitForFinalInvocation(http, project.orgId, String(scheduled.body.invocationId), token, 15_000);
    expect(done.status).toBe('SUCCEEDED');
  });
});
