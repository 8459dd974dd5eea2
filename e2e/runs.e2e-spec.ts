import { gatewayService } from '@runline/gateway-service';
import { invocationService } from '@runline/invocation-service';
import { HttpClient, queryDatabase, startTestSystem, type HttpResult, type TestSystem } from '@runline/testing';
import {
  createProject,
  createPublishedProject,
  issueToken,
  publishDefinition,
  VALID_CHATBOT_DEFINITION,
  type ProjectFixture,
} from './gateway-fixtures.js';
import {
  ASK_BOT_DEFINITION,
  automationDefinition,
  chatbotDefinition,
  failingSetFlow,
  invocationPath,
  ISO_DATE_TIME,
  pollUntilFinal,
  runPath,
  SPEC_INVOCATION_FIELDS,
  UUID_PATTERN,
  type Json,
  type RunEndpoint,
} from './support/runs-support.js';
import { gate, startLocalServer, type LocalServer } from './support/lifecycle-support.js';

/**
 * Runs over HTTP like a client: the six run endpoints and GET /external-invocations/{id}, with
 * the answers the spec and README "Runs" promise, word for word.
 */
const ALL_SCOPES = ['bot:invoke', 'flow:trigger', 'automation:trigger'];
const UUID = expect.stringMatching(UUID_PATTERN);
const ISO = expect.stringMatching(ISO_DATE_TIME);
const NO_SUCH_UUID = '00000000-0000-4000-8000-000000000000';

const FLOW_BODY = { event: 'order.created', customerId: 'c-1', orderId: '42' };
/** What GET shows of a finished sync run of the chatbot flow (a message node, then end). */
const SYNC_FLOW_RUN = {
  environment: 'PRODUCTION',
  mode: 'SYNC',
  targetType: 'FLOW',
  steps: [
    ['n1', 'message'],
    ['n2', 'end'],
  ] as Array<[string, string]>,
};
const AUTOMATION_BODY = { event: 'order.created', payload: { orderId: 'o-1', amount: 5 } };

describe('runs', () => {
  let system: TestSystem;
  let http: HttpClient;
  const sql = (query: string, parameters: unknown[] = []) => queryDatabase(system.database.url, query, parameters);

  beforeAll(async () => {
    // Zero TTL: settings and token changes made in a test are seen by the gateway's next call.
    system = await startTestSystem([gatewayService, invocationService], { environment: { ACCESS_CACHE_TTL_MS: '0' } });
    http = new HttpClient(system.url('gateway'));
  });
  afterAll(() => system?.stop());

  async function withToken(type: 'CHATBOT' | 'AUTOMATION', scopes: string[], definition?: object) {
    const project = await createPublishedProject(http, type, definition);
    const token = (await issueToken(http, project, scopes)).token;
    return { project, token };
  }

  const post = (endpoint: RunEndpoint, project: ProjectFixture, token: string, body: unknown) =>
    http.post<Json>(runPath(endpoint, project), body, { bearer: token });
  const read = (project: ProjectFixture, token: string, invocationId: unknown) =>
    http.get<Json>(invocationPath(project.orgId, String(invocationId)), { bearer: token });

  /** Every field of the spec's Invocation table, with the values of a finished, successful run. */
  function expectFinishedRun(
    run: Json,
    expected: { invocationId: unknown; environment: string; mode: string; targetType: string; steps: Array<[string, string]> },
  ): void {
    for (const field of SPEC_INVOCATION_FIELDS) expect(run).toHaveProperty(field);
    // In the spec's order, then the fields we add.
    expect(Object.keys(run).slice(0, SPEC_INVOCATION_FIELDS.length)).toEqual([...SPEC_INVOCATION_FIELDS]);
    expect(run).toMatchObject({
      invocationId: expected.invocationId,
      status: 'SUCCEEDED',
      environment: expected.environment,
      triggerSource: 'WEBHOOK',
      mode: expected.mode,
      targetType: expected.targetType,
      startedAt: ISO,
      completedAt: ISO,
      durationMs: expect.any(Number),
      errorMessage: null,
      trace: expect.objectContaining({ runtime: expect.any(String) }),
      callbackAttempts: [],
      scheduledFor: null,
      schedulerStatus: null,
      schedulerJobName: null,
      pendingApproval: null,
      createdAt: ISO,
      updatedAt: ISO,
    });
    expect(run.steps).toEqual(
      expected.steps.map(([nodeId, type]) =>
        expect.objectContaining({ nodeId, type, status: 'SUCCEEDED', startedAt: ISO, completedAt: ISO, durationMs: expect.any(Number) }),
      ),
    );
    const time = (field: string) => Date.parse(String(run[field]));
    expect(time('startedAt')).toBeLessThanOrEqual(time('completedAt'));
    expect(time('createdAt')).toBeLessThanOrEqual(time('startedAt'));
    expect(time('createdAt')).toBeLessThanOrEqual(time('updatedAt'));
    expect(run.durationMs as number).toBeGreaterThanOrEqual(0);
  }

  describe('success answers and the stored run', () => {
    it('bot message: 200 {invocationId, status, result: {messages, actions, raw}, sessionId}; GET shows the SYNC BOT run', async () => {
      const { project, token } = await withToken('CHATBOT', ['bot:invoke']);
      const body = { message: 'hi', sessionId: 'shape-1', userName: 'Ada', platform: 'web' };
      const answer = await post('botMessage', project, token, body);
      expect(answer.status).toBe(200);
      expect(answer.body).toEqual({
        invocationId: UUID,
        status: 'SUCCEEDED',
        result: { messages: ['Hi Ada'], actions: [], raw: { status: 'SUCCEEDED', result: null, waitingForInput: false } },
        sessionId: 'shape-1',
      });

      const run = await read(project, token, answer.body.invocationId);
      expect(run.status).toBe(200);
      expectFinishedRun(run.body, {
        invocationId: answer.body.invocationId,
        environment: 'PRODUCTION',
        mode: 'SYNC',
        targetType: 'BOT',
        steps: [
          ['hello', 'message'],
          ['end', 'end'],
        ],
      });
      expect(run.body.requestPayload).toEqual(body);
      expect(run.body.result).toEqual(answer.body.result);
    });

    it('bot invoke: 202 {invocationId, status: QUEUED, sessionId} without scheduledFor; runAt / delaySeconds are ignored and it runs at once', async () => {
      const { project, token } = await withToken('CHATBOT', ['bot:invoke']);
      const later = new Date(Date.now() + 3_600_000).toISOString();
      const bodies = [
        { message: 'hi', sessionId: 'inv-1', userName: 'Bo', runAt: later },
        { message: 'hi', sessionId: 'inv-2', userName: 'Bo', delaySeconds: 3600 },
        { message: 'hi', sessionId: 'inv-3', userName: 'Bo', runAt: later, delaySeconds: 3600 },
      ];
      for (const body of bodies) {
        const answer = await post('botInvoke', project, token, body);
        expect(answer.status).toBe(202);
        expect(answer.body).toEqual({ invocationId: UUID, status: 'QUEUED', sessionId: body.sessionId });
        expect(answer.body).not.toHaveProperty('scheduledFor');

        // Well inside the hour it was asked to wait: the fields were ignored.
        const run = await pollUntilFinal(http, project.orgId, String(answer.body.invocationId), token);
        expect(run.status).toBe(200);
        expectFinishedRun(run.body, {
          invocationId: answer.body.invocationId,
          environment: 'PRODUCTION',
          mode: 'ASYNC',
          targetType: 'BOT',
          steps: [
            ['hello', 'message'],
            ['end', 'end'],
          ],
        });
        expect(run.body.result).toEqual({ messages: ['Hi Bo'], actions: [], raw: { status: 'SUCCEEDED', result: null, waitingForInput: false } });
      }
    });

    it('flow trigger: 200 {invocationId, status: SUCCEEDED, result: {messages, actions}}; GET shows the SYNC FLOW run', async () => {
      const { project, token } = await withToken('CHATBOT', ['flow:trigger']);
      const answer = await post('flowTrigger', project, token, FLOW_BODY);
      expect(answer.status).toBe(200);
      expect(answer.body).toEqual({ invocationId: UUID, status: 'SUCCEEDED', result: { messages: ['Order 42'], actions: [] } });

      const run = await read(project, token, answer.body.invocationId);
      expect(run.status).toBe(200);
      expectFinishedRun(run.body, { invocationId: answer.body.invocationId, ...SYNC_FLOW_RUN });
      expect(run.body.requestPayload).toEqual(FLOW_BODY);
      expect(run.body.result).toEqual({ messages: ['Order 42'], actions: [] });
    });

    it('flow trigger with EVERY_MATCH (executed first, recorded once ended): the same answer and the same stored run, started before it completed', async () => {
      const { project, token } = await withToken('CHATBOT', ['flow:trigger']);
      const body = { ...FLOW_BODY, enrollmentPolicy: 'EVERY_MATCH' };
      const before = Date.now();
      const answer = await post('flowTrigger', project, token, body);
      expect(answer.status).toBe(200);
      expect(answer.body).toEqual({ invocationId: UUID, status: 'SUCCEEDED', result: { messages: ['Order 42'], actions: [] } });

      const run = await read(project, token, answer.body.invocationId);
      expectFinishedRun(run.body, { invocationId: answer.body.invocationId, ...SYNC_FLOW_RUN });
      expect(run.body.enrollmentPolicy).toBe('EVERY_MATCH');
      const startedAt = Date.parse(String(run.body.startedAt));
      const completedAt = Date.parse(String(run.body.completedAt));
      expect(startedAt).toBeGreaterThanOrEqual(before - 1_000);
      expect(completedAt).toBeGreaterThanOrEqual(startedAt);
      expect(Date.parse(String(run.body.updatedAt))).toBe(completedAt);
    });

    it('flow trigger-async: 202 {invocationId, status: QUEUED, scheduledFor: null}; the run reaches SUCCEEDED', async () => {
      const { project, token } = await withToken('CHATBOT', ['flow:trigger']);
      const body = { ...FLOW_BODY, orderId: '43' };
      const answer = await post('flowTriggerAsync', project, token, body);
      expect(answer.status).toBe(202);
      expect(answer.body).toEqual({ invocationId: UUID, status: 'QUEUED', scheduledFor: null });

      const run = await pollUntilFinal(http, project.orgId, String(answer.body.invocationId), token);
      expect(run.status).toBe(200);
      expectFinishedRun(run.body, {
        invocationId: answer.body.invocationId,
        environment: 'PRODUCTION',
        mode: 'ASYNC',
        targetType: 'FLOW',
        steps: [
          ['n1', 'message'],
          ['n2', 'end'],
        ],
      });
      expect(run.body.requestPayload).toEqual(body);
      expect(run.body.result).toEqual({ messages: ['Order 43'], actions: [] });
    });

    it('automation trigger: 200 with result = what the workflow returns; GET shows the SYNC AUTOMATION run', async () => {
      const { project, token } = await withToken('AUTOMATION', ['automation:trigger']);
      const answer = await post('automationTrigger', project, token, AUTOMATION_BODY);
      expect(answer.status).toBe(200);
      expect(answer.body).toEqual({ invocationId: UUID, status: 'SUCCEEDED', result: { ok: true, orderId: 'o-1' } });

      const run = await read(project, token, answer.body.invocationId);
      expect(run.status).toBe(200);
      expectFinishedRun(run.body, {
        invocationId: answer.body.invocationId,
        environment: 'PRODUCTION',
        mode: 'SYNC',
        targetType: 'AUTOMATION',
        steps: [['n1', 'return']],
      });
      expect(run.body.requestPayload).toEqual(AUTOMATION_BODY);
      expect(run.body.result).toEqual({ ok: true, orderId: 'o-1' });
    });

    it('automation trigger-async: 202 {invocationId, status: QUEUED, scheduledFor: null}; the run reaches SUCCEEDED', async () => {
      const { project, token } = await withToken('AUTOMATION', ['automation:trigger']);
      const answer = await post('automationTriggerAsync', project, token, AUTOMATION_BODY);
      expect(answer.status).toBe(202);
      expect(answer.body).toEqual({ invocationId: UUID, status: 'QUEUED', scheduledFor: null });

      const run = await pollUntilFinal(http, project.orgId, String(answer.body.invocationId), token);
      expect(run.status).toBe(200);
      expectFinishedRun(run.body, {
        invocationId: answer.body.invocationId,
        environment: 'PRODUCTION',
        mode: 'ASYNC',
        targetType: 'AUTOMATION',
        steps: [['n1', 'return']],
      });
      expect(run.body.result).toEqual({ ok: true, orderId: 'o-1' });
    });

    it('automation trigger with runtimeStage "app" runs the draft, recorded as environment TEST; without it, the published version', async () => {
      const { project, token } = await withToken('AUTOMATION', ['automation:trigger']);
      const draft = automationDefinition({
        trigger: { externalEnabled: true, expectedPayload: { orderId: '' } },
        start: 'n1',
        nodes: { n1: { type: 'return', value: "{ 'stage': 'draft', 'orderId': payload.orderId }" } },
      });
      const saved = await http.put(`/v1/orgs/${project.orgId}/projects/${project.projectId}/definition`, { definition: draft }, { bearer: project.ownerJwt });
      expect(saved.status).toBe(200);

      const test = await post('automationTrigger', project, token, { ...AUTOMATION_BODY, runtimeStage: 'app' });
      expect(test.status).toBe(200);
      expect(test.body).toEqual({ invocationId: UUID, status: 'SUCCEEDED', result: { stage: 'draft', orderId: 'o-1' } });
      const testRun = await read(project, token, test.body.invocationId);
      expectFinishedRun(testRun.body, {
        invocationId: test.body.invocationId,
        environment: 'TEST',
        mode: 'SYNC',
        targetType: 'AUTOMATION',
        steps: [['n1', 'return']],
      });

      for (const body of [AUTOMATION_BODY, { ...AUTOMATION_BODY, runtimeStage: 'production' }]) {
        const production = await post('automationTrigger', project, token, body);
        expect(production.body).toEqual({ invocationId: UUID, status: 'SUCCEEDED', result: { ok: true, orderId: 'o-1' } });
        expect((await read(project, token, production.body.invocationId)).body.environment).toBe('PRODUCTION');
      }
    });
  });

  describe('errors that apply to each run endpoint', () => {
    type Home = 'CHATBOT' | 'AUTOMATION';
    type Wrong = Home | 'OTHER';
    const BOT_ONLY = 'Bot message API is only available for chatbot projects';
    const USE_AUTOMATION_API = 'Automation projects must use the automation trigger API';
    const AUTOMATION_ONLY = 'Automation trigger API is only available for automation projects';
    const NOT_SUPPORTED = 'External API access is not supported for this project type';
    const BOT_BODY = { message: 'hi' };

    const ENDPOINTS: Array<{ endpoint: RunEndpoint; scope: string; home: Home; body: object; wrongType: Array<[Wrong, string]> }> = [
      { endpoint: 'botMessage', scope: 'bot:invoke', home: 'CHATBOT', body: BOT_BODY, wrongType: [['AUTOMATION', BOT_ONLY], ['OTHER', BOT_ONLY]] },
      { endpoint: 'botInvoke', scope: 'bot:invoke', home: 'CHATBOT', body: BOT_BODY, wrongType: [['AUTOMATION', BOT_ONLY], ['OTHER', BOT_ONLY]] },
      { endpoint: 'flowTrigger', scope: 'flow:trigger', home: 'CHATBOT', body: FLOW_BODY, wrongType: [['AUTOMATION', USE_AUTOMATION_API], ['OTHER', NOT_SUPPORTED]] },
      { endpoint: 'flowTriggerAsync', scope: 'flow:trigger', home: 'CHATBOT', body: FLOW_BODY, wrongType: [['AUTOMATION', USE_AUTOMATION_API], ['OTHER', NOT_SUPPORTED]] },
      { endpoint: 'automationTrigger', scope: 'automation:trigger', home: 'AUTOMATION', body: AUTOMATION_BODY, wrongType: [['CHATBOT', AUTOMATION_ONLY], ['OTHER', AUTOMATION_ONLY]] },
      { endpoint: 'automationTriggerAsync', scope: 'automation:trigger', home: 'AUTOMATION', body: AUTOMATION_BODY, wrongType: [['CHATBOT', AUTOMATION_ONLY], ['OTHER', AUTOMATION_ONLY]] },
    ];

    const projects = {} as Record<Wrong, ProjectFixture>;
    const allScopes = {} as Record<Wrong, string>;
    let strangerOrg: ProjectFixture;

    beforeAll(async () => {
      for (const type of ['CHATBOT', 'AUTOMATION', 'OTHER'] as const) {
        projects[type] = await createPublishedProject(http, type === 'AUTOMATION' ? 'AUTOMATION' : 'CHATBOT');
        // The console offers flow:trigger for chatbot projects only; a token holding every scope is written directly.
        const issued = await issueToken(http, projects[type], ['bot:invoke', 'automation:trigger']);
        await sql(`UPDATE gateway.api_tokens SET scopes = $2 WHERE id = $1`, [issued.id, ALL_SCOPES]);
        allScopes[type] = issued.token;
      }
      // The spec names a fourth message for "any other project type". Only two types can be made
      // through the console, so the third is forced into this test's own database.
      const constraints = await sql(`SELECT conname FROM pg_constraint WHERE conrelid = 'gateway.projects'::regclass AND contype = 'c'`);
      for (const { conname } of constraints) await sql(`ALTER TABLE gateway.projects DROP CONSTRAINT "${String(conname)}"`);
      await sql(`UPDATE gateway.projects SET type = 'KNOWLEDGE_BASE' WHERE id = $1`, [projects.OTHER.projectId]);
      strangerOrg = await createProject(http, 'CHATBOT');
    });

    it.each(ENDPOINTS)('$endpoint: 401 Missing API token', async ({ endpoint, home, body }) => {
      const answer = await http.post(runPath(endpoint, projects[home]), body);
      expect(answer).toMatchObject({ status: 401, body: { error: 'Missing API token' } });
    });

    it.each(ENDPOINTS)('$endpoint: 403 Insufficient token scope without $scope', async ({ endpoint, scope, home, body }) => {
      const project = projects[home];
      const others = ALL_SCOPES.filter((s) => s !== scope && (home === 'CHATBOT' || s !== 'flow:trigger'));
      const token = (await issueToken(http, project, others)).token;
      const answer = await post(endpoint, project, token, body);
      expect(answer).toMatchObject({ status: 403, body: { error: 'Insufficient token scope' } });
    });

    it.each(ENDPOINTS)('$endpoint: 400 for the wrong project type', async ({ endpoint, body, wrongType }) => {
      for (const [type, message] of wrongType) {
        const answer = await post(endpoint, projects[type], allScopes[type], body);
        expect({ type, status: answer.status, body: answer.body }).toEqual({ type, status: 400, body: { error: message } });
      }
    });

    it.each(ENDPOINTS)('$endpoint: 404 Project not found for a wrong orgId', async ({ endpoint, home, body }) => {
      const project = projects[home];
      for (const orgId of [strangerOrg.orgId, NO_SUCH_UUID]) {
        const answer = await post(endpoint, { ...project, orgId }, allScopes[home], body);
        expect(answer).toMatchObject({ status: 404, body: { error: 'Project not found' } });
      }
    });
  });

  describe('scheduling fields (every rule: e2e/scheduling-requests.e2e-spec.ts)', () => {
    it('the async trigger endpoints check runAt / delaySeconds: a broken rule is a 400 with the spec\'s message, and nothing is recorded', async () => {
      const chatbot = await withToken('CHATBOT', ['flow:trigger']);
      const automation = await withToken('AUTOMATION', ['automation:trigger']);
      const runAt = new Date(Date.now() + 60_000).toISOString();
      const answers: Array<[HttpResult<Json>, string]> = [
        [await post('flowTriggerAsync', chatbot.project, chatbot.token, { ...FLOW_BODY, runAt, delaySeconds: 5 }), 'Provide either runAt or delaySeconds, not both'],
        [await post('flowTriggerAsync', chatbot.project, chatbot.token, { ...FLOW_BODY, runAt: '2030-01-01T10:00:00' }), 'runAt must be a valid ISO date-time'],
        [await post('automationTriggerAsync', automation.project, automation.token, { ...AUTOMATION_BODY, runAt: '2020-01-01T00:00:00Z' }), 'runAt must be in the future'],
        [await post('automationTriggerAsync', automation.project, automation.token, { ...AUTOMATION_BODY, delaySeconds: '5' }), 'delaySeconds must be a positive number'],
      ];
      for (const [answer, message] of answers) {
        expect(answer).toMatchObject({ status: 400, body: { error: message } });
      }
      const rows = await sql('SELECT count(*) AS n FROM invocation.invocations WHERE project_id = ANY($1::uuid[])', [
        [chatbot.project.projectId, automation.project.projectId],
      ]);
      expect(Number(rows[0]!.n)).toBe(0);
    });
  });

  describe('bot sessions', () => {
    const ASKED = { messages: ['What is your name?'], actions: [], raw: expect.objectContaining({ waitingForInput: true }) };
    const greeted = (name: string) => ({ messages: [`Hello ${name}`], actions: [], raw: expect.objectContaining({ waitingForInput: false }) });

    it('a sessionId continues the conversation: the second message answers the ask', async () => {
      const { project, token } = await withToken('CHATBOT', ['bot:invoke'], ASK_BOT_DEFINITION);
      const first = await post('botMessage', project, token, { sessionId: 's-1', message: 'hello' });
      expect(first.status).toBe(200);
      expect(first.body).toEqual({ invocationId: UUID, status: 'SUCCEEDED', result: ASKED, sessionId: 's-1' });
      const second = await post('botMessage', project, token, { sessionId: 's-1', message: 'Ada' });
      expect(second.status).toBe(200);
      expect(second.body).toEqual({ invocationId: UUID, status: 'SUCCEEDED', result: greeted('Ada'), sessionId: 's-1' });
      expect(second.body.invocationId).not.toBe(first.body.invocationId);
      // Another session of the same project starts at the question.
      expect((await post('botMessage', project, token, { sessionId: 's-2', message: 'Ada' })).body.result).toEqual(ASKED);
    });

    it('without sessionId, the userId is the session', async () => {
      const { project, token } = await withToken('CHATBOT', ['bot:invoke'], ASK_BOT_DEFINITION);
      const first = await post('botMessage', project, token, { userId: 'u-7', message: 'hello' });
      expect(first.body).toEqual({ invocationId: UUID, status: 'SUCCEEDED', result: ASKED, sessionId: 'u-7' });
      const second = await post('botMessage', project, token, { userId: 'u-7', message: 'Bob' });
      expect(second.body).toEqual({ invocationId: UUID, status: 'SUCCEEDED', result: greeted('Bob'), sessionId: 'u-7' });
    });

    it('with neither, a new random session: the answer returns it, and a message without ids starts afresh', async () => {
      const { project, token } = await withToken('CHATBOT', ['bot:invoke'], ASK_BOT_DEFINITION);
      const first = await post('botMessage', project, token, { message: 'hello' });
      expect(first.body).toEqual({ invocationId: UUID, status: 'SUCCEEDED', result: ASKED, sessionId: expect.any(String) });
      const sessionId = String(first.body.sessionId);
      expect(sessionId.length).toBeGreaterThanOrEqual(16);

      const again = await post('botMessage', project, token, { message: 'Eve' });
      expect(again.body).toEqual({ invocationId: UUID, status: 'SUCCEEDED', result: ASKED, sessionId: expect.any(String) });
      expect(again.body.sessionId).not.toBe(sessionId);

      // The returned id continues the first conversation.
      const answered = await post('botMessage', project, token, { sessionId, message: 'Eve' });
      expect(answered.body).toEqual({ invocationId: UUID, status: 'SUCCEEDED', result: greeted('Eve'), sessionId });
    });
  });

  describe('trigger checks', () => {
    const MISSING_CUSTOMER = 'Payload is missing required keys: customerId';
    const KEY_MISMATCH = `triggerKey "other_key" does not match the Trigger node's key "external_event"`;
    const DISABLED = 'External trigger is not enabled on the Trigger node';
    const DISABLED_FLOW = chatbotDefinition({
      trigger: { externalEnabled: false },
      start: 'n1',
      nodes: { n1: { type: 'message', text: 'ran', next: 'n2' }, n2: { type: 'end' } },
    });

    /** How many RunInvocation work-queue commands the outbox holds for a run. */
    async function queuedCommands(invocationId: unknown): Promise<number> {
      const [row] = await sql(
        `SELECT count(*)::int AS n FROM invocation.outbox WHERE subject LIKE '%run-invocation' AND position(convert_to($1, 'UTF8') IN data) > 0`,
        [String(invocationId)],
      );
      return Number(row.n);
    }

    const cases: Array<{ name: string; definition?: object; body: object; error: string }> = [
      { name: 'missing keys', body: { event: 'order.created', orderId: '1' }, error: MISSING_CUSTOMER },
      { name: 'triggerKey mismatch', body: { ...FLOW_BODY, triggerKey: 'other_key' }, error: KEY_MISMATCH },
      { name: 'external trigger disabled', definition: DISABLED_FLOW, body: FLOW_BODY, error: DISABLED },
    ];

    it.each(cases)('flow trigger, $name: 500 {error, invocationId, status: FAILED}; GET shows the FAILED run', async ({ definition, body, error }) => {
      const { project, token } = await withToken('CHATBOT', ['flow:trigger'], definition ?? VALID_CHATBOT_DEFINITION);
      const answer = await post('flowTrigger', project, token, body);
      expect(answer.status).toBe(500);
      expect(answer.body).toEqual({ error, invocationId: UUID, status: 'FAILED' });
      const run = await read(project, token, answer.body.invocationId);
      expect(run.status).toBe(200);
      expect(run.body).toMatchObject({ invocationId: answer.body.invocationId, status: 'FAILED', errorMessage: error, mode: 'SYNC', targetType: 'FLOW', steps: [], result: null });
    });

    it.each(cases)('flow trigger-async, $name: 500 as well, and nothing is queued', async ({ definition, body, error }) => {
      const { project, token } = await withToken('CHATBOT', ['flow:trigger'], definition ?? VALID_CHATBOT_DEFINITION);
      const answer = await post('flowTriggerAsync', project, token, body);
      expect(answer.status).toBe(500);
      expect(answer.body).toEqual({ error, invocationId: UUID, status: 'FAILED' });
      // The run was recorded FAILED, with whatever it emitted, before this answer: no wait.
      const run = await read(project, token, answer.body.invocationId);
      expect(run.body).toMatchObject({ status: 'FAILED', errorMessage: error, mode: 'ASYNC', targetType: 'FLOW', startedAt: null, steps: [], result: null });
      expect(await queuedCommands(answer.body.invocationId)).toBe(0);
      expect(await sql(`SELECT status FROM invocation.invocations WHERE id = $1`, [answer.body.invocationId])).toEqual([{ status: 'FAILED' }]);
    });

    it('a valid async trigger is queued (the control for "nothing is queued")', async () => {
      const { project, token } = await withToken('CHATBOT', ['flow:trigger']);
      const answer = await post('flowTriggerAsync', project, token, FLOW_BODY);
      expect(answer.status).toBe(202);
      expect(await queuedCommands(answer.body.invocationId)).toBe(1);
    });

    it('automation with expectedPayload {orderId, amount}: missing amount → 500, sync and async', async () => {
      const { project, token } = await withToken('AUTOMATION', ['automation:trigger']);
      for (const endpoint of ['automationTrigger', 'automationTriggerAsync'] as const) {
        const answer = await post(endpoint, project, token, { event: 'order.created', payload: { orderId: 'o-1' } });
        expect(answer.status).toBe(500);
        expect(answer.body).toEqual({ error: 'Payload is missing required keys: amount', invocationId: UUID, status: 'FAILED' });
        const run = await read(project, token, answer.body.invocationId);
        expect(run.body).toMatchObject({ status: 'FAILED', errorMessage: 'Payload is missing required keys: amount', targetType: 'AUTOMATION' });
      }
    });

    it('several reasons are joined with "; ", missing keys named in the order of expectedPayload (README "Runs")', async () => {
      const { project, token } = await withToken('AUTOMATION', ['automation:trigger']);
      const both = await post('automationTrigger', project, token, { triggerKey: 'x', payload: {} });
      expect(both.status).toBe(500);
      expect(both.body).toEqual({
        error: `triggerKey "x" does not match the Trigger node's key "external_event"; Payload is missing required keys: orderId, amount`,
        invocationId: UUID,
        status: 'FAILED',
      });
    });

    describe('dryRun', () => {
      const sorted = (value: unknown) => [...(value as string[])].sort();
      const validationOf = (answer: HttpResult<Json>) => (answer.body.result as { validation: Json }).validation;

      async function recordedRuns(projectId: string): Promise<number> {
        const [row] = await sql(`SELECT count(*)::int AS n FROM invocation.invocations WHERE project_id = $1`, [projectId]);
        const [view] = await sql(`SELECT count(*)::int AS n FROM invocation.invocation_views WHERE project_id = $1`, [projectId]);
        return Number(row.n) + Number(view.n);
      }

      it('flow: 200 {invocationId: null, status: VALID | INVALID, dryRun: true, result: {validation}}; nothing recorded', async () => {
        const { project, token } = await withToken('CHATBOT', ['flow:trigger']);
        for (const endpoint of ['flowTrigger', 'flowTriggerAsync'] as const) {
          const valid = await post(endpoint, project, token, { ...FLOW_BODY, dryRun: true });
          expect(valid.status).toBe(200);
          expect(valid.body).toEqual({
            invocationId: null,
            status: 'VALID',
            dryRun: true,
            result: { validation: { valid: true, expectedKeys: expect.any(Array), actualKeys: expect.any(Array), missingKeys: [], errors: [] } },
          });
          expect(sorted(validationOf(valid).expectedKeys)).toEqual(['customerId', 'event']);
          expect(sorted(validationOf(valid).actualKeys)).toEqual(['customerId', 'event', 'orderId']);

          const invalid = await post(endpoint, project, token, { event: 'order.created', note: 'x', dryRun: true });
          expect(invalid.status).toBe(200);
          expect(invalid.body).toEqual({
            invocationId: null,
            status: 'INVALID',
            dryRun: true,
            result: { validation: { valid: false, expectedKeys: expect.any(Array), actualKeys: expect.any(Array), missingKeys: ['customerId'], errors: [MISSING_CUSTOMER] } },
          });
          expect(sorted(validationOf(invalid).actualKeys)).toEqual(['event', 'note']);
        }
        const mismatch = await post('flowTrigger', project, token, { ...FLOW_BODY, triggerKey: 'other_key', dryRun: true });
        expect(mismatch.body).toMatchObject({ status: 'INVALID', result: { validation: { valid: false, missingKeys: [], errors: [KEY_MISMATCH] } } });
        expect(await recordedRuns(project.projectId)).toBe(0);
      });

      it('automation: the keys of payload against expectedPayload; nothing recorded', async () => {
        const { project, token } = await withToken('AUTOMATION', ['automation:trigger']);
        for (const endpoint of ['automationTrigger', 'automationTriggerAsync'] as const) {
          const invalid = await post(endpoint, project, token, { event: 'e', payload: { orderId: 'o-1', extra: 1 }, dryRun: true });
          expect(invalid.status).toBe(200);
          expect(invalid.body).toEqual({
            invocationId: null,
            status: 'INVALID',
            dryRun: true,
            result: {
              validation: {
                valid: false,
                expectedKeys: expect.any(Array),
                actualKeys: expect.any(Array),
                missingKeys: ['amount'],
                errors: ['Payload is missing required keys: amount'],
              },
            },
          });
          expect(sorted(validationOf(invalid).expectedKeys)).toEqual(['amount', 'orderId']);
          expect(sorted(validationOf(invalid).actualKeys)).toEqual(['extra', 'orderId']);
          const valid = await post(endpoint, project, token, { ...AUTOMATION_BODY, dryRun: true });
          expect(valid.body).toMatchObject({ invocationId: null, status: 'VALID', dryRun: true, result: { validation: { valid: true, missingKeys: [], errors: [] } } });
        }
        expect(await recordedRuns(project.projectId)).toBe(0);
      });
    });
  });

  describe('policies', () => {
    const settingsOf = (project: ProjectFixture) => `/v1/orgs/${project.orgId}/projects/${project.projectId}/api-settings`;

    /** A chatbot project whose project defaults are set before `definition` is published. */
    async function projectWith(defaults: Json, definition: object) {
      const project = await createProject(http, 'CHATBOT');
      if (Object.keys(defaults).length > 0) {
        const patched = await http.patch(settingsOf(project), defaults, { bearer: project.ownerJwt });
        expect(patched.status).toBe(200);
      }
      await publishDefinition(http, project, definition);
      const token = (await issueToken(http, project, ['flow:trigger'])).token;
      return { project, token };
    }

    const DEFAULTS = { defaultEnrollmentPolicy: 'EVERY_MATCH', defaultOnErrorPolicy: 'CONTINUE' };
    const resolution: Array<{ name: string; defaults: Json; trigger: Json; request: Json; enrollment: string; onError: string }> = [
      { name: 'nothing set: ONE_TIME / ABORT', defaults: {}, trigger: {}, request: {}, enrollment: 'ONE_TIME', onError: 'ABORT' },
      { name: 'project defaults', defaults: DEFAULTS, trigger: {}, request: {}, enrollment: 'EVERY_MATCH', onError: 'CONTINUE' },
      {
        name: 'the trigger over the project defaults',
        defaults: DEFAULTS,
        trigger: { enrollmentPolicy: 'ONE_TIME', onErrorPolicy: 'ABORT' },
        request: {},
        enrollment: 'ONE_TIME',
        onError: 'ABORT',
      },
      {
        name: 'the request over the trigger',
        defaults: { defaultEnrollmentPolicy: 'ONE_TIME', defaultOnErrorPolicy: 'ABORT' },
        trigger: { enrollmentPolicy: 'ONE_TIME', onErrorPolicy: 'ABORT' },
        request: { enrollmentPolicy: 'EVERY_MATCH', onErrorPolicy: 'CONTINUE' },
        enrollment: 'EVERY_MATCH',
        onError: 'CONTINUE',
      },
    ];

    it.each(resolution)('resolve request → trigger → project default ($name), recorded on the run and applied', async ({ defaults, trigger, request, enrollment, onError }) => {
      const { project, token } = await projectWith(defaults, chatbotDefinition(failingSetFlow(trigger)));
      const answer = await post('flowTrigger', project, token, { ...FLOW_BODY, ...request });
      // The failing first node shows which on-error policy the run ran with.
      expect(answer.status).toBe(onError === 'CONTINUE' ? 200 : 500);
      const run = await read(project, token, answer.body.invocationId);
      expect(run.body).toMatchObject({ enrollmentPolicy: enrollment, onErrorPolicy: onError });
    });

    it('automation: trigger policies over project defaults, request over both', async () => {
      const project = await createProject(http, 'AUTOMATION');
      expect((await http.patch(settingsOf(project), DEFAULTS, { bearer: project.ownerJwt })).status).toBe(200);
      await publishDefinition(
        http,
        project,
        automationDefinition({ trigger: { enrollmentPolicy: 'ONE_TIME', onErrorPolicy: 'ABORT' }, start: 'n1', nodes: { n1: { type: 'return', value: "{ 'ok': true }" } } }),
      );
      const token = (await issueToken(http, project, ['automation:trigger'])).token;
      const fromTrigger = await post('automationTrigger', project, token, { payload: {} });
      expect((await read(project, token, fromTrigger.body.invocationId)).body).toMatchObject({ enrollmentPolicy: 'ONE_TIME', onErrorPolicy: 'ABORT' });
      const fromRequest = await post('automationTrigger', project, token, { payload: {}, enrollmentPolicy: 'EVERY_MATCH', onErrorPolicy: 'CONTINUE' });
      expect((await read(project, token, fromRequest.body.invocationId)).body).toMatchObject({ enrollmentPolicy: 'EVERY_MATCH', onErrorPolicy: 'CONTINUE' });
    });

    it('ONE_TIME: the second run for the same customerId succeeds skipped, with a reason, and runs nothing', async () => {
      const { project, token } = await withToken('CHATBOT', ['flow:trigger']);
      const first = await post('flowTrigger', project, token, { ...FLOW_BODY, customerId: 'once-1', enrollmentPolicy: 'ONE_TIME' });
      expect(first.body).toEqual({ invocationId: UUID, status: 'SUCCEEDED', result: { messages: ['Order 42'], actions: [] } });

      const second = await post('flowTrigger', project, token, { ...FLOW_BODY, customerId: 'once-1', enrollmentPolicy: 'ONE_TIME' });
      expect(second.status).toBe(200);
      expect(second.body).toEqual({
        invocationId: UUID,
        status: 'SUCCEEDED',
        result: { messages: [], actions: [], skipped: true, reason: expect.stringMatching(/\S/) },
      });
      const run = await read(project, token, second.body.invocationId);
      expect(run.body).toMatchObject({ status: 'SUCCEEDED', enrollmentPolicy: 'ONE_TIME', steps: [], result: { skipped: true, messages: [] } });

      // Another customer is enrolled afresh; the project default (ONE_TIME) applies without the field.
      const other = await post('flowTrigger', project, token, { ...FLOW_BODY, customerId: 'once-2' });
      expect(other.body).toMatchObject({ status: 'SUCCEEDED', result: { messages: ['Order 42'], actions: [] } });
      expect(other.body.result).not.toHaveProperty('skipped');
      const repeat = await post('flowTrigger', project, token, { ...FLOW_BODY, customerId: 'once-2' });
      expect(repeat.body).toMatchObject({ status: 'SUCCEEDED', result: { messages: [], skipped: true } });
    });

    it('ONE_TIME on an automation: skipped result for the same payload.customerId; no subject, no enrollment', async () => {
      const { project, token } = await withToken('AUTOMATION', ['automation:trigger'], automationDefinition({
        start: 'n1',
        nodes: { n1: { type: 'return', value: "{ 'ran': true }" } },
      }));
      const body = { payload: { customerId: 'a-1' }, enrollmentPolicy: 'ONE_TIME' };
      expect((await post('automationTrigger', project, token, body)).body).toMatchObject({ status: 'SUCCEEDED', result: { ran: true } });
      const second = await post('automationTrigger', project, token, body);
      expect(second.status).toBe(200);
      expect(second.body).toEqual({ invocationId: UUID, status: 'SUCCEEDED', result: { skipped: true, reason: expect.stringMatching(/\S/) } });
      for (let i = 0; i < 2; i++) {
        expect((await post('automationTrigger', project, token, { payload: {}, enrollmentPolicy: 'ONE_TIME' })).body).toMatchObject({ result: { ran: true } });
      }
    });

    it('EVERY_MATCH runs every time for the same customerId', async () => {
      const { project, token } = await withToken('CHATBOT', ['flow:trigger']);
      for (let i = 0; i < 2; i++) {
        const answer = await post('flowTrigger', project, token, { ...FLOW_BODY, customerId: 'every-1', enrollmentPolicy: 'EVERY_MATCH' });
        expect(answer.body).toEqual({ invocationId: UUID, status: 'SUCCEEDED', result: { messages: ['Order 42'], actions: [] } });
      }
    });

    it('ABORT: a failing node ends the run, 500 FAILED naming the node', async () => {
      const { project, token } = await withToken('CHATBOT', ['flow:trigger'], chatbotDefinition(failingSetFlow()));
      const answer = await post('flowTrigger', project, token, { ...FLOW_BODY, onErrorPolicy: 'ABORT' });
      expect(answer.status).toBe(500);
      expect(answer.body).toEqual({ error: expect.stringMatching(/^node "n1": .*boom/), invocationId: UUID, status: 'FAILED' });
      const run = await read(project, token, answer.body.invocationId);
      expect(run.body).toMatchObject({ status: 'FAILED', errorMessage: answer.body.error, onErrorPolicy: 'ABORT', result: null });
      expect(run.body.steps).toEqual([expect.objectContaining({ nodeId: 'n1', type: 'set', status: 'FAILED' })]);
    });

    it('CONTINUE: the failed step is recorded FAILED and the run goes on to SUCCEEDED', async () => {
      const { project, token } = await withToken('CHATBOT', ['flow:trigger'], chatbotDefinition(failingSetFlow()));
      const answer = await post('flowTrigger', project, token, { ...FLOW_BODY, onErrorPolicy: 'CONTINUE' });
      expect(answer.status).toBe(200);
      expect(answer.body).toEqual({ invocationId: UUID, status: 'SUCCEEDED', result: { messages: ['after'], actions: [] } });
      const run = await read(project, token, answer.body.invocationId);
      expect(run.body).toMatchObject({ status: 'SUCCEEDED', errorMessage: null, onErrorPolicy: 'CONTINUE' });
      expect(run.body.steps).toEqual([
        expect.objectContaining({ nodeId: 'n1', type: 'set', status: 'FAILED', error: expect.stringMatching(/boom/) }),
        expect.objectContaining({ nodeId: 'n2', type: 'message', status: 'SUCCEEDED' }),
        expect.objectContaining({ nodeId: 'n3', type: 'end', status: 'SUCCEEDED' }),
      ]);
    });

    it('a fail node fails the run with its rendered error', async () => {
      const definition = chatbotDefinition({ start: 'n1', nodes: { n1: { type: 'fail', error: 'Declined {{ payload.customerId }}' } } });
      const { project, token } = await withToken('CHATBOT', ['flow:trigger'], definition);
      const answer = await post('flowTrigger', project, token, { ...FLOW_BODY, customerId: 'c-9', onErrorPolicy: 'ABORT' });
      expect(answer.status).toBe(500);
      expect(answer.body).toEqual({ error: 'Declined c-9', invocationId: UUID, status: 'FAILED' });
      expect((await read(project, token, answer.body.invocationId)).body).toMatchObject({ status: 'FAILED', errorMessage: 'Declined c-9' });
    });
  });

  describe('GET /external-invocations/{id}', () => {
    it('403 Token does not match invocation for another token of the same project, even with the scope', async () => {
      const { project, token } = await withToken('CHATBOT', ['flow:trigger']);
      const started = await post('flowTrigger', project, token, FLOW_BODY);
      const other = (await issueToken(http, project, ALL_SCOPES)).token;
      expect(await read(project, other, started.body.invocationId)).toMatchObject({ status: 403, body: { error: 'Token does not match invocation' } });
      expect((await read(project, token, started.body.invocationId)).status).toBe(200);
    });

    it('a token with only flow:trigger reads its own flow run', async () => {
      const { project, token } = await withToken('CHATBOT', ['flow:trigger']);
      const started = await post('flowTriggerAsync', project, token, FLOW_BODY);
      const run = await pollUntilFinal(http, project.orgId, String(started.body.invocationId), token);
      expect(run).toMatchObject({ status: 200, body: { invocationId: started.body.invocationId, targetType: 'FLOW', status: 'SUCCEEDED' } });
    });

    it('403 Insufficient token scope when the starting token no longer carries the target\'s scope', async () => {
      // Tokens cannot be changed through the console; the scope change is written directly.
      const chatbot = await createPublishedProject(http, 'CHATBOT');
      const issued = await issueToken(http, chatbot, ['bot:invoke', 'flow:trigger']);
      const started = await post('botMessage', chatbot, issued.token, { message: 'hi', sessionId: 'scope-1' });
      expect(started.status).toBe(200);
      expect((await read(chatbot, issued.token, started.body.invocationId)).status).toBe(200);
      await sql(`UPDATE gateway.api_tokens SET scopes = '{flow:trigger}' WHERE id = $1`, [issued.id]);
      expect(await read(chatbot, issued.token, started.body.invocationId)).toMatchObject({ status: 403, body: { error: 'Insufficient token scope' } });
    });

    it('404 Invocation not found for an unknown uuid and for an id that is not a uuid', async () => {
      const { project, token } = await withToken('CHATBOT', ALL_SCOPES);
      for (const id of [NO_SUCH_UUID, 'not-a-uuid', '12345']) {
        expect(await read(project, token, id)).toMatchObject({ status: 404, body: { error: 'Invocation not found' } });
      }
    });

    it('404 Invocation not found for a run of another organization', async () => {
      const mine = await withToken('CHATBOT', ['flow:trigger']);
      const started = await post('flowTrigger', mine.project, mine.token, FLOW_BODY);
      expect(started.status).toBe(200);
      const theirs = await withToken('CHATBOT', ALL_SCOPES);
      expect(theirs.project.orgId).not.toBe(mine.project.orgId);
      expect(await read(theirs.project, theirs.token, started.body.invocationId)).toMatchObject({ status: 404, body: { error: 'Invocation not found' } });
    });
  });

  describe('redaction', () => {
    const SECRET_BODY = {
      ...FLOW_BODY,
      customerId: 'red-1',
      password: 'hunter2-password',
      apiToken: 'hunter2-api-token',
      headers: { authorization: 'Bearer hunter2-bearer', accept: 'application/json' },
      note: 'kept',
    };

    it('GET shows [REDACTED] for secrets in requestPayload; other fields stay; nothing in the database holds them in clear', async () => {
      const { project, token } = await withToken('CHATBOT', ['flow:trigger']);
      const answer = await post('flowTriggerAsync', project, token, { ...SECRET_BODY, webhookSecret: 'hunter2-webhook-secret' });
      expect(answer.status).toBe(202);
      const run = await pollUntilFinal(http, project.orgId, String(answer.body.invocationId), token);
      expect(run.body.status).toBe('SUCCEEDED');
      expect(run.body.requestPayload).toEqual({
        event: 'order.created',
        customerId: 'red-1',
        orderId: '42',
        password: '[REDACTED]',
        apiToken: '[REDACTED]',
        headers: { authorization: '[REDACTED]', accept: 'application/json' },
        note: 'kept',
        webhookSecret: '[REDACTED]',
      });
      expect(run.body.result).toEqual({ messages: ['Order 42'], actions: [] });
      expect(JSON.stringify(run.body)).not.toContain('hunter2');

      const id = String(answer.body.invocationId);
      const [plan] = await sql(`SELECT sealed_plan FROM invocation.invocations WHERE id = $1`, [id]);
      expect(typeof plan.sealed_plan).toBe('string');
      expect(String(plan.sealed_plan)).not.toContain('hunter2');
      expect(String(plan.sealed_plan)).not.toContain('password');
      const leaks = await sql(
        `SELECT 'views' AS source FROM invocation.invocation_views WHERE document::text LIKE '%hunter2%'
         UNION ALL SELECT 'events' FROM invocation.invocation_events WHERE data::text LIKE '%hunter2%'
         UNION ALL SELECT 'outbox' FROM invocation.outbox WHERE position(convert_to('hunter2', 'UTF8') IN data) > 0`,
      );
      expect(leaks).toEqual([]);
      // The check above reads the run's rows: they exist.
      const [events] = await sql(`SELECT count(*)::int AS n FROM invocation.invocation_events WHERE invocation_id = $1`, [id]);
      expect(Number(events.n)).toBeGreaterThanOrEqual(2);
    });

    it('a sync flow run with secrets: stored redacted, the answer is the run\'s result', async () => {
      const { project, token } = await withToken('CHATBOT', ['flow:trigger']);
      const answer = await post('flowTrigger', project, token, SECRET_BODY);
      expect(answer.body).toEqual({ invocationId: UUID, status: 'SUCCEEDED', result: { messages: ['Order 42'], actions: [] } });
      const run = await read(project, token, answer.body.invocationId);
      expect(run.body.requestPayload).toMatchObject({ password: '[REDACTED]', apiToken: '[REDACTED]', headers: { authorization: '[REDACTED]' }, note: 'kept' });
      expect(JSON.stringify(run.body)).not.toContain('hunter2');
    });

    it('a workflow returning {token, ok}: the sync answer is unredacted, GET shows result.token [REDACTED]', async () => {
      const definition = automationDefinition({ start: 'n1', nodes: { n1: { type: 'return', value: "{ 'token': 'abc', 'ok': true }" } } });
      const { project, token } = await withToken('AUTOMATION', ['automation:trigger'], definition);
      const answer = await post('automationTrigger', project, token, { payload: { orderId: 'o-1', password: 'hunter2-auto', nested: { apiKey: 'hunter2-key' } } });
      expect(answer.status).toBe(200);
      expect(answer.body).toEqual({ invocationId: UUID, status: 'SUCCEEDED', result: { token: 'abc', ok: true } });

      const run = await read(project, token, answer.body.invocationId);
      expect(run.body.result).toEqual({ token: '[REDACTED]', ok: true });
      expect(run.body.requestPayload).toEqual({ payload: { orderId: 'o-1', password: '[REDACTED]', nested: { apiKey: '[REDACTED]' } } });
      expect(JSON.stringify(run.body)).not.toContain('hunter2');
      const [view] = await sql(`SELECT document->'result'->>'token' AS token FROM invocation.invocation_views WHERE id = $1`, [answer.body.invocationId]);
      expect(view.token).toBe('[REDACTED]');
      const stored = await sql(`SELECT data::text AS data FROM invocation.invocation_events WHERE invocation_id = $1`, [answer.body.invocationId]);
      for (const { data } of stored) {
        expect(String(data)).not.toContain('hunter2');
        expect(String(data)).not.toMatch(/"token":\s*"abc"/);
      }
    });
  });
});

describe('runs: sync time limit', () => {
  let system: TestSystem;
  let http: HttpClient;
  let slow: LocalServer;
  // The endpoint answers only once the test has the run's answer: the run cannot have been
  // ended by the endpoint's answer (a check of the time the request took would depend on the
  // machine's speed instead).
  const held = gate();

  beforeAll(async () => {
    slow = await startLocalServer(async () => {
      await held.opened;
      return { status: 200, body: { ok: true } };
    });
    system = await startTestSystem([gatewayService, invocationService], {
      environment: { SYNC_RUN_TIMEOUT_MS: '300', OUTBOUND_ALLOWED_CIDRS: '127.0.0.0/8' },
    });
    http = new HttpClient(system.url('gateway'));
  });
  afterAll(async () => {
    held.open();
    await system?.stop();
    await slow?.close();
  });

  it('an http node that has not answered by the time limit: 500 {error: "Time limit …", invocationId, status: TIMEOUT}', async () => {
    const definition = chatbotDefinition({
      start: 'call',
      nodes: { call: { type: 'http', method: 'GET', url: slow.url, saveAs: 'reply', next: 'done' }, done: { type: 'message', text: 'done', next: 'end' }, end: { type: 'end' } },
    });
    const project = await createPublishedProject(http, 'CHATBOT', definition);
    const token = (await issueToken(http, project, ['flow:trigger'])).token;
    // The watchdog ends the run; it does not wait for the server's answer (still held here).
    const answer = await http.post<Json>(runPath('flowTrigger', project), FLOW_BODY, { bearer: token });
    held.open();
    expect(answer.status).toBe(500);
    expect(answer.body).toEqual({ error: expect.stringMatching(/^Time limit of 300 ms exceeded/), invocationId: UUID, status: 'TIMEOUT' });
    expect(slow.calls).toHaveLength(1);

    const run = await http.get<Json>(invocationPath(project.orgId, String(answer.body.invocationId)), { bearer: token });
    expect(run.body).toMatchObject({ status: 'TIMEOUT', errorMessage: answer.body.error, mode: 'SYNC', completedAt: ISO });
  });
});
