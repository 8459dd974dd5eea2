import { gatewayService } from '@runline/gateway-service';
import { invocationService } from '@runline/invocation-service';
import { HttpClient, queryDatabase, startTestSystem, type TestSystem } from '@runline/testing';
import { createPublishedProject, issueToken, type ProjectFixture } from './gateway-fixtures.js';
import { invocationPath, pollUntilFinal, runPath, UUID_PATTERN, type Json, type RunEndpoint } from './support/runs-support.js';

/**
 * The gateway's side of scheduling, over HTTP like a client: the scheduling rules of
 * the async trigger endpoints, where they are ignored, and the checks of
 * PATCH /external-invocations/{id} that come before the invocation service is asked to change
 * a run. What the invocation service answers (200 with the changed run, the 409s) and a valid
 * scheduled trigger (202 SCHEDULED) are tested with the invocation side.
 */
const ALL_SCOPES = ['bot:invoke', 'flow:trigger', 'automation:trigger'];
const UUID = expect.stringMatching(UUID_PATTERN);
const NO_SUCH_UUID = '00000000-0000-4000-8000-000000000000';
const DAY_MS = 24 * 60 * 60 * 1000;

const FLOW_BODY = { event: 'order.created', customerId: 'c-1', orderId: '42' };
const AUTOMATION_BODY = { event: 'order.created', payload: { orderId: 'o-1', amount: 5 } };

const BOTH = 'Provide either runAt or delaySeconds, not both';
const INVALID_RUN_AT = 'runAt must be a valid ISO date-time';
const NOT_FUTURE = 'runAt must be in the future';
const INVALID_DELAY = 'delaySeconds must be a positive number';
const RUN_AT_TOO_FAR = 'runAt must be at most 365 days in the future';
const DELAY_TOO_LONG = 'delaySeconds must be at most 31536000 (365 days)';

const inFuture = (ms: number) => new Date(Date.now() + ms).toISOString();

/** Bodies that break a scheduling rule, and the message each gets; built per request so "now" is fresh. */
function badSchedulingFields(): Array<[string, Json, string]> {
  return [
    ['runAt and delaySeconds, both valid', { runAt: inFuture(60_000), delaySeconds: 60 }, BOTH],
    ['runAt and delaySeconds, both invalid (checked first)', { runAt: 'garbage', delaySeconds: '5' }, BOTH],
    ['runAt and delaySeconds: null', { runAt: inFuture(60_000), delaySeconds: null }, BOTH],
    ['runAt not a date', { runAt: 'tomorrow' }, INVALID_RUN_AT],
    ['runAt without Z or offset', { runAt: '2030-01-01T10:00:00' }, INVALID_RUN_AT],
    ['runAt a date only', { runAt: '2030-01-01' }, INVALID_RUN_AT],
    ['runAt 30 February', { runAt: '2030-02-30T10:00:00Z' }, INVALID_RUN_AT],
    ['runAt empty', { runAt: '' }, INVALID_RUN_AT],
    ['runAt a number (epoch ms)', { runAt: Date.now() + 60_000 }, INVALID_RUN_AT],
    ['runAt null', { runAt: null }, INVALID_RUN_AT],
    ['runAt now', { runAt: new Date().toISOString() }, NOT_FUTURE],
    ['runAt a second ago', { runAt: inFuture(-1000) }, NOT_FUTURE],
    ['runAt in the past with an offset', { runAt: '2020-06-01T12:00:00+02:00' }, NOT_FUTURE],
    ['runAt 366 days ahead', { runAt: inFuture(366 * DAY_MS) }, RUN_AT_TOO_FAR],
    ['delaySeconds 0', { delaySeconds: 0 }, INVALID_DELAY],
    ['delaySeconds -1', { delaySeconds: -1 }, INVALID_DELAY],
    ['delaySeconds "5" (a string)', { delaySeconds: '5' }, INVALID_DELAY],
    ['delaySeconds null', { delaySeconds: null }, INVALID_DELAY],
    ['delaySeconds true', { delaySeconds: true }, INVALID_DELAY],
    ['delaySeconds over 365 days', { delaySeconds: 365 * 24 * 60 * 60 + 1 }, DELAY_TOO_LONG],
  ];
}

describe('scheduling requests', () => {
  let system: TestSystem;
  let http: HttpClient;
  const sql = (query: string, parameters: unknown[] = []) => queryDatabase(system.database.url, query, parameters);

  beforeAll(async () => {
    // Zero TTL: token scope changes written in a test are seen by the gateway's next call.
    system = await startTestSystem([gatewayService, invocationService], { environment: { ACCESS_CACHE_TTL_MS: '0' } });
    http = new HttpClient(system.url('gateway'));
  });
  afterAll(() => system?.stop());

  async function withToken(type: 'CHATBOT' | 'AUTOMATION', scopes: string[]) {
    const project = await createPublishedProject(http, type);
    const issued = await issueToken(http, project, scopes);
    return { project, token: issued.token, tokenId: issued.id };
  }

  const post = (endpoint: RunEndpoint, project: ProjectFixture, token: string | undefined, body: unknown) =>
    http.post<Json>(runPath(endpoint, project), body, token === undefined ? {} : { bearer: token });
  const countRuns = async (projectIds: string[]) =>
    Number((await sql('SELECT count(*) AS n FROM invocation.invocations WHERE project_id = ANY($1::uuid[])', [projectIds]))[0]!.n);

  describe('scheduling rules on the async trigger endpoints', () => {
    const ASYNC_TRIGGERS: Array<{ endpoint: RunEndpoint; type: 'CHATBOT' | 'AUTOMATION'; scope: string; body: Json }> = [
      { endpoint: 'flowTriggerAsync', type: 'CHATBOT', scope: 'flow:trigger', body: FLOW_BODY },
      { endpoint: 'automationTriggerAsync', type: 'AUTOMATION', scope: 'automation:trigger', body: AUTOMATION_BODY },
    ];

    it.each(ASYNC_TRIGGERS)('$endpoint: 400 with the exact message for each broken rule, and nothing is recorded', async ({ endpoint, type, scope, body }) => {
      const { project, token } = await withToken(type, [scope]);
      for (const [name, fields, message] of badSchedulingFields()) {
        const answer = await post(endpoint, project, token, { ...body, ...fields });
        expect({ name, status: answer.status, body: answer.body }).toEqual({ name, status: 400, body: { error: message } });
      }
      expect(await countRuns([project.projectId])).toBe(0);
    });

    it.each(ASYNC_TRIGGERS)('$endpoint: the token checks come first, the other body fields next, the scheduling rules last', async ({ endpoint, type, scope, body }) => {
      const { project, token } = await withToken(type, [scope]);
      expect(await post(endpoint, project, undefined, { ...body, runAt: 'garbage' })).toMatchObject({ status: 401, body: { error: 'Missing API token' } });
      const wrongScope = (await issueToken(http, project, ['bot:invoke'])).token;
      expect(await post(endpoint, project, wrongScope, { ...body, runAt: 'garbage' })).toMatchObject({ status: 403, body: { error: 'Insufficient token scope' } });
      const badPolicy = await post(endpoint, project, token, { ...body, enrollmentPolicy: 'SOMETIMES', runAt: 'garbage' });
      expect(badPolicy.status).toBe(400);
      expect(String(badPolicy.body.error)).toMatch(/^enrollmentPolicy /);
    });

    it.each(ASYNC_TRIGGERS)('$endpoint: a dry run checks the scheduling fields too, and a valid one is still only a dry run', async ({ endpoint, type, scope, body }) => {
      const { project, token } = await withToken(type, [scope]);
      expect(await post(endpoint, project, token, { ...body, dryRun: true, delaySeconds: 0 })).toMatchObject({ status: 400, body: { error: INVALID_DELAY } });
      for (const fields of [{ delaySeconds: 60 }, { runAt: inFuture(3_600_000) }]) {
        const answer = await post(endpoint, project, token, { ...body, dryRun: true, ...fields });
        expect(answer).toMatchObject({ status: 200, body: { invocationId: null, status: 'VALID', dryRun: true } });
      }
      expect(await countRuns([project.projectId])).toBe(0);
    });
  });

  describe('the sync endpoints and /bots/{projectId}/invoke ignore runAt and delaySeconds', () => {
    const GARBAGE: Json[] = [
      { runAt: 'garbage' },
      { runAt: '2030-01-01T10:00:00' },
      { runAt: '2020-01-01T00:00:00Z' },
      { delaySeconds: '5' },
      { delaySeconds: -1 },
      { runAt: 'garbage', delaySeconds: 0 },
      { runAt: null, delaySeconds: null },
    ];

    it('flow trigger: 200 SUCCEEDED, at once', async () => {
      const { project, token } = await withToken('CHATBOT', ['flow:trigger']);
      for (const [i, fields] of GARBAGE.entries()) {
        // A customer per call: the default ONE_TIME policy would skip a repeat.
        const answer = await post('flowTrigger', project, token, { ...FLOW_BODY, customerId: `c-${i}`, ...fields });
        expect({ fields, status: answer.status, body: answer.body }).toEqual({
          fields,
          status: 200,
          body: { invocationId: UUID, status: 'SUCCEEDED', result: { messages: ['Order 42'], actions: [] } },
        });
      }
    });

    it('automation trigger: 200 SUCCEEDED, at once', async () => {
      const { project, token } = await withToken('AUTOMATION', ['automation:trigger']);
      for (const fields of GARBAGE) {
        const answer = await post('automationTrigger', project, token, { ...AUTOMATION_BODY, ...fields });
        expect({ fields, status: answer.status, body: answer.body }).toEqual({
          fields,
          status: 200,
          body: { invocationId: UUID, status: 'SUCCEEDED', result: { ok: true, orderId: 'o-1' } },
        });
      }
    });

    it('bot message: 200 SUCCEEDED, at once', async () => {
      const { project, token } = await withToken('CHATBOT', ['bot:invoke']);
      for (const [i, fields] of GARBAGE.entries()) {
        const answer = await post('botMessage', project, token, { message: 'hi', sessionId: `msg-${i}`, userName: 'Ada', ...fields });
        expect({ fields, status: answer.status, runStatus: answer.body.status }).toEqual({ fields, status: 200, runStatus: 'SUCCEEDED' });
      }
    });

    it('bot invoke: 202 QUEUED without scheduledFor, and the run finishes at once', async () => {
      const { project, token } = await withToken('CHATBOT', ['bot:invoke']);
      for (const [i, fields] of GARBAGE.entries()) {
        const answer = await post('botInvoke', project, token, { message: 'hi', sessionId: `inv-${i}`, userName: 'Ada', ...fields });
        expect({ fields, status: answer.status, body: answer.body }).toEqual({
          fields,
          status: 202,
          body: { invocationId: UUID, status: 'QUEUED', sessionId: `inv-${i}` },
        });
        const run = await pollUntilFinal(http, project.orgId, String(answer.body.invocationId), token);
        expect(run).toMatchObject({ status: 200, body: { status: 'SUCCEEDED', scheduledFor: null } });
      }
    });
  });

  describe('PATCH /external-invocations/{id}: the checks before the run is changed', () => {
    const patch = (orgId: string, invocationId: string, token: string | undefined, body?: unknown) =>
      http.patch<Json>(invocationPath(orgId, invocationId), body, token === undefined ? {} : { bearer: token });

    /** A chatbot project, its flow:trigger token, and an immediate async run that token started. */
    async function ownRun(scopes: string[] = ['flow:trigger']) {
      const { project, token, tokenId } = await withToken('CHATBOT', scopes);
      const started = await post('flowTriggerAsync', project, token, FLOW_BODY);
      expect(started).toMatchObject({ status: 202, body: { invocationId: UUID, status: 'QUEUED', scheduledFor: null } });
      return { project, token, tokenId, invocationId: String(started.body.invocationId) };
    }

    let mine: Awaited<ReturnType<typeof ownRun>>;
    beforeAll(async () => {
      mine = await ownRun();
    });

    it('401 Missing API token', async () => {
      expect(await patch(mine.project.orgId, mine.invocationId, undefined, { action: 'cancel' })).toMatchObject({
        status: 401,
        body: { error: 'Missing API token' },
      });
    });

    it('404 Invocation not found for an unknown uuid and for an id that is not a uuid', async () => {
      for (const id of [NO_SUCH_UUID, 'not-a-uuid']) {
        for (const body of [{ action: 'cancel' }, { action: 'reschedule', delaySeconds: 60 }]) {
          expect(await patch(mine.project.orgId, id, mine.token, body)).toMatchObject({ status: 404, body: { error: 'Invocation not found' } });
        }
      }
    });

    it('404 Invocation not found for a run of another organization', async () => {
      const theirs = await withToken('CHATBOT', ALL_SCOPES);
      expect(theirs.project.orgId).not.toBe(mine.project.orgId);
      expect(await patch(theirs.project.orgId, mine.invocationId, theirs.token, { action: 'cancel' })).toMatchObject({
        status: 404,
        body: { error: 'Invocation not found' },
      });
    });

    it('403 Token does not match invocation for another token of the same project, even with every scope', async () => {
      const other = (await issueToken(http, mine.project, ['bot:invoke', 'flow:trigger'])).token;
      for (const body of [{ action: 'cancel' }, { action: 'reschedule', runAt: inFuture(3_600_000) }]) {
        expect(await patch(mine.project.orgId, mine.invocationId, other, body)).toMatchObject({
          status: 403,
          body: { error: 'Token does not match invocation' },
        });
      }
    });

    it("403 Insufficient token scope when the starting token no longer carries the target's scope", async () => {
      const run = await ownRun(['flow:trigger', 'bot:invoke']);
      // Tokens cannot be changed through the console; the scope change is written directly.
      await sql(`UPDATE gateway.api_tokens SET scopes = '{bot:invoke}' WHERE id = $1`, [run.tokenId]);
      for (const body of [{ action: 'cancel' }, { action: 'reschedule', delaySeconds: 60 }]) {
        expect(await patch(run.project.orgId, run.invocationId, run.token, body)).toMatchObject({
          status: 403,
          body: { error: 'Insufficient token scope' },
        });
      }
    });

    it.each(['approve', 'reject'])('%s with an API token: 403 Unauthorized, before the run is looked up', async (action) => {
      const other = (await issueToken(http, mine.project, ['flow:trigger'])).token;
      const cases: Array<[string, string]> = [
        ['own run', mine.token],
        ['another token', other],
      ];
      for (const [name, token] of cases) {
        const answer = await patch(mine.project.orgId, mine.invocationId, token, { action });
        expect({ name, status: answer.status, body: answer.body }).toEqual({ name, status: 403, body: { error: 'Unauthorized' } });
      }
      // The same answer for an id that does not exist: it tells nothing about which ids exist.
      expect(await patch(mine.project.orgId, NO_SUCH_UUID, mine.token, { action })).toEqual(
        expect.objectContaining({ status: 403, body: { error: 'Unauthorized' } }),
      );
    });

    it('400 for a missing or unknown action', async () => {
      const cases: Array<[unknown, string]> = [
        [undefined, 'action is required'],
        [{}, 'action is required'],
        [{ action: null }, 'action is required'],
        [{ action: 'delete' }, 'action must be one of: cancel, reschedule, approve, reject'],
        [{ action: 'CANCEL' }, 'action must be one of: cancel, reschedule, approve, reject'],
        [{ action: 5 }, 'action must be one of: cancel, reschedule, approve, reject'],
        [{ runAt: inFuture(60_000) }, 'action is required'],
      ];
      for (const [body, message] of cases) {
        const answer = await patch(mine.project.orgId, mine.invocationId, mine.token, body);
        expect({ body, status: answer.status, answer: answer.body }).toEqual({ body, status: 400, answer: { error: message } });
      }
    });

    it('400 for cancel with any other field', async () => {
      for (const extra of [{ runAt: inFuture(60_000) }, { delaySeconds: 60 }, { reason: 'changed my mind' }, { runAt: null }]) {
        const answer = await patch(mine.project.orgId, mine.invocationId, mine.token, { action: 'cancel', ...extra });
        expect({ extra, status: answer.status, body: answer.body }).toEqual({
          extra,
          status: 400,
          body: { error: 'cancel takes no fields other than action' },
        });
      }
    });

    it('400 for reschedule without runAt or delaySeconds', async () => {
      expect(await patch(mine.project.orgId, mine.invocationId, mine.token, { action: 'reschedule' })).toMatchObject({
        status: 400,
        body: { error: 'reschedule needs runAt or delaySeconds' },
      });
    });

    it('400 for reschedule with a time that breaks a scheduling rule: the same messages as the triggers', async () => {
      for (const [name, fields, message] of badSchedulingFields()) {
        const answer = await patch(mine.project.orgId, mine.invocationId, mine.token, { action: 'reschedule', ...fields });
        expect({ name, status: answer.status, body: answer.body }).toEqual({ name, status: 400, body: { error: message } });
      }
    });

    it('the body is checked before the run is looked up: a bad body on an unknown id or another token\'s run is a 400', async () => {
      const other = (await issueToken(http, mine.project, ['flow:trigger'])).token;
      const cases: Array<[string, string, string]> = [
        ['unknown id', NO_SUCH_UUID, mine.token],
        ["another token's run", mine.invocationId, other],
      ];
      for (const [name, id, token] of cases) {
        const answer = await patch(mine.project.orgId, id, token, { action: 'reschedule', delaySeconds: 0 });
        expect({ name, status: answer.status, body: answer.body }).toEqual({ name, status: 400, body: { error: INVALID_DELAY } });
      }
    });

    it('GET still reads the run afterwards: nothing above changed it', async () => {
      const run = await pollUntilFinal(http, mine.project.orgId, mine.invocationId, mine.token);
      expect(run).toMatchObject({ status: 200, body: { invocationId: mine.invocationId, status: 'SUCCEEDED', schedulerStatus: null } });
    });
  });
});
