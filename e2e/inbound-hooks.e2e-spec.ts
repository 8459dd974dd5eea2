import { randomUUID } from 'node:crypto';
import { PassThrough } from 'node:stream';
import { deadLetterService } from '@runline/dead-letter-service';
import { gatewayService } from '@runline/gateway-service';
import { invocationService } from '@runline/invocation-service';
import { consoleJwt, HttpClient, queryDatabase, startTestSystem, type TestSystem } from '@runline/testing';
import { webhookService } from '@runline/webhook-service';
import {
  createPublishedProject,
  createProject,
  issueToken,
  publishDefinition,
  VALID_AUTOMATION_DEFINITION,
  VALID_CHATBOT_DEFINITION,
  type ProjectFixture,
} from './gateway-fixtures.js';
import { createHook, deliver, nowSeconds, signDelivery, type CreatedHook } from './support/hook-deliveries.js';
import { eventually } from './support/lifecycle-support.js';

interface RunRow {
  status: string;
  mode: string;
  target: string;
  source: string;
  payload: Record<string, unknown>;
  result: Record<string, unknown> | null;
}

/** Inbound hooks end to end over HTTP (DESIGN section 9): console routes, the public URL's every answer. */
describe('inbound hooks', () => {
  let system: TestSystem;
  let http: HttpClient;
  const logs = new PassThrough();
  let logText = '';
  logs.on('data', (chunk: Buffer) => (logText += chunk.toString()));
  const sql = <T>(query: string, parameters: unknown[] = []) => queryDatabase(system.database.url, query, parameters) as Promise<T[]>;

  const hooksPath = (project: ProjectFixture) => `/v1/orgs/${project.orgId}/projects/${project.projectId}/webhooks`;
  const run = async (invocationId: string) =>
    (
      await sql<RunRow>(
        `SELECT document->>'status' AS status, document->>'mode' AS mode, document->>'targetType' AS target, document->>'triggerSource' AS source,
                document->'requestPayload' AS payload, document->'result' AS result
           FROM invocation.invocation_views WHERE id = $1`,
        [invocationId],
      )
    )[0];
  const finished = (invocationId: string) =>
    eventually(`run ${invocationId} finished`, async () => {
      const row = await run(invocationId);
      return row && ['SUCCEEDED', 'FAILED'].includes(row.status) ? row : undefined;
    });
  const runsOf = async (project: ProjectFixture) =>
    (await sql<{ n: number }>(`SELECT count(*)::int AS n FROM invocation.invocation_views WHERE project_id = $1`, [project.projectId]))[0]!.n;

  beforeAll(async () => {
    system = await startTestSystem([gatewayService, invocationService, deadLetterService, webhookService], { logDestination: logs, logLevel: 'debug' });
    http = new HttpClient(system.url('gateway'));
  });
  afterAll(async () => {
    await system?.stop();
  });

  describe('console routes', () => {
    let project: ProjectFixture;
    beforeAll(async () => {
      project = await createPublishedProject(http, 'CHATBOT');
    });

    it('creates a hook: 201 with its URL and a generated secret shown once; the list has no secret', async () => {
      const created = await http.post<CreatedHook>(hooksPath(project), { name: 'shop orders' }, { bearer: project.ownerJwt });
      expect(created.status).toBe(201);
      expect(created.body).toEqual({
        id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        name: 'shop orders',
        url: `${system.url('gateway')}/v1/hooks/${created.body.id}`,
        secret: expect.stringMatching(/^rlwhsec_[A-Za-z0-9_-]{43}$/),
        status: 'ACTIVE',
        rateLimitPerMinute: 600,
        createdAt: expect.any(String),
      });
      const listed = await http.get<{ data: Array<Record<string, unknown>> }>(hooksPath(project), { bearer: project.ownerJwt });
      expect(listed.status).toBe(200);
      const mine = listed.body.data.find((hook) => hook.id === created.body.id);
      expect(mine).toEqual({ id: created.body.id, name: 'shop orders', url: created.body.url, status: 'ACTIVE', rateLimitPerMinute: 600, createdAt: created.body.createdAt });
      expect(JSON.stringify(listed.body)).not.toContain(created.body.secret);
    });

    it('takes a secret of the creator’s own and answers 400 for a bad body', async () => {
      const secret = `own-secret-${randomUUID()}`;
      const created = await createHook(http, project, { name: 'own', secret });
      expect(created.secret).toBe(secret);
      const cases: Array<[object, string]> = [
        [{}, 'name is required'],
        [{ name: 'x', secret: 'short' }, 'secret must be 16 to 256 characters'],
        [{ name: 'x', rateLimitPerMinute: 0 }, 'rateLimitPerMinute must be an integer from 1 to 100000'],
      ];
      for (const [body, error] of cases) {
        const answer = await http.post(hooksPath(project), body, { bearer: project.ownerJwt });
        expect({ body, status: answer.status, error: answer.body.error }).toEqual({ body, status: 400, error });
      }
    });

    it('answers 401 without or with a bad console token (an API token too), 404 outside the organization or for an unknown project', async () => {
      for (const method of ['GET', 'POST'] as const) {
        const none = await http.request(method, hooksPath(project), method === 'POST' ? { body: { name: 'x' } } : {});
        expect([none.status, none.body.error]).toEqual([401, 'Missing console token']);
        const bad = await http.request(method, hooksPath(project), { bearer: 'not-a-jwt', ...(method === 'POST' ? { body: { name: 'x' } } : {}) });
        expect([bad.status, bad.body.error]).toEqual([401, 'Invalid or expired console token']);
      }
      const revokeNone = await http.delete(`${hooksPath(project)}/${randomUUID()}`);
      expect([revokeNone.status, revokeNone.body.error]).toEqual([401, 'Missing console token']);
      // An API token is not a console credential.
      const { token } = await issueToken(http, project, ['flow:trigger']);
      const withToken = await http.post(hooksPath(project), { name: 'x' }, { bearer: token });
      expect([withToken.status, withToken.body.error]).toEqual([401, 'Invalid or expired console token']);

      const stranger = consoleJwt(`stranger-${randomUUID()}`);
      for (const answer of [
        await http.get(hooksPath(project), { bearer: stranger }),
        await http.post(hooksPath(project), { name: 'x' }, { bearer: stranger }),
        await http.delete(`${hooksPath(project)}/${randomUUID()}`, { bearer: stranger }),
      ]) {
        expect([answer.status, answer.body.error]).toEqual([404, 'Organization not found']);
      }
      const unknownProject = `/v1/orgs/${project.orgId}/projects/${randomUUID()}/webhooks`;
      const missing = await http.get(unknownProject, { bearer: project.ownerJwt });
      expect([missing.status, missing.body.error]).toEqual([404, 'Project not found']);
    });

    it('lets a VIEWER list but not create or revoke (403)', async () => {
      const hook = await createHook(http, project, { name: 'viewer test' });
      const viewerId = `viewer-${randomUUID()}`;
      const added = await http.post(`/v1/orgs/${project.orgId}/members`, { userId: viewerId, role: 'VIEWER' }, { bearer: project.ownerJwt });
      expect(added.status).toBe(201);
      const viewer = consoleJwt(viewerId);
      const listed = await http.get<{ data: Array<{ id: string }> }>(hooksPath(project), { bearer: viewer });
      expect(listed.status).toBe(200);
      expect(listed.body.data.map((entry) => entry.id)).toContain(hook.id);
      const create = await http.post(hooksPath(project), { name: 'x' }, { bearer: viewer });
      expect([create.status, create.body.error]).toEqual([403, 'This action requires edit access to the project']);
      const revoke = await http.delete(`${hooksPath(project)}/${hook.id}`, { bearer: viewer });
      expect([revoke.status, revoke.body.error]).toEqual([403, 'This action requires edit access to the project']);
    });

    it('revokes with 204 (again: 204), lists the hook REVOKED, and answers 404 for a hook it does not have', async () => {
      const hook = await createHook(http, project, { name: 'to revoke' });
      for (let i = 0; i < 2; i++) expect((await http.delete(`${hooksPath(project)}/${hook.id}`, { bearer: project.ownerJwt })).status).toBe(204);
      const listed = await http.get<{ data: Array<{ id: string; status: string }> }>(hooksPath(project), { bearer: project.ownerJwt });
      expect(listed.body.data.find((entry) => entry.id === hook.id)?.status).toBe('REVOKED');
      for (const id of [randomUUID(), 'not-a-uuid']) {
        const answer = await http.delete(`${hooksPath(project)}/${id}`, { bearer: project.ownerJwt });
        expect([answer.status, answer.body.error]).toEqual([404, 'Webhook not found']);
      }
      // Another project's hook is not this project's.
      const other = await createPublishedProject(http, 'CHATBOT');
      const theirs = await createHook(http, other);
      const cross = await http.delete(`${hooksPath(project)}/${theirs.id}`, { bearer: project.ownerJwt });
      expect([cross.status, cross.body.error]).toEqual([404, 'Webhook not found']);
    });
  });

  describe('deliveries', () => {
    let chatbot: ProjectFixture;
    let hook: CreatedHook;
    const order = (n: number | string) => ({ event: 'order.created', customerId: `c-${n}`, orderId: `A-${n}` });

    beforeAll(async () => {
      chatbot = await createPublishedProject(http, 'CHATBOT');
      await http.patch(`/v1/orgs/${chatbot.orgId}/projects/${chatbot.projectId}/api-settings`, { defaultEnrollmentPolicy: 'EVERY_MATCH' }, { bearer: chatbot.ownerJwt });
      hook = await createHook(http, chatbot, { name: 'shop' });
    });

    it('starts an async WEBHOOK run of a chatbot flow from a body signed without a timestamp: 202 {invocationId, status}', async () => {
      const answer = await deliver(http, hook.id, hook.secret, order(1));
      expect(answer.status).toBe(202);
      expect(answer.body).toEqual({ invocationId: expect.any(String), status: 'QUEUED' });
      const row = await finished(answer.body.invocationId!);
      expect(row).toMatchObject({ status: 'SUCCEEDED', mode: 'ASYNC', target: 'FLOW', source: 'WEBHOOK' });
      expect(row.payload).toMatchObject(order(1));
    });

    it('accepts a timestamped signature within 300 s and refuses a stale one with 401 Timestamp outside the tolerance', async () => {
      for (const offset of [0, -250, 250]) {
        const answer = await deliver(http, hook.id, hook.secret, order(`t${offset}`), { timestamp: nowSeconds(offset) });
        expect([offset, answer.status]).toEqual([offset, 202]);
      }
      for (const offset of [-400, 400]) {
        const answer = await deliver(http, hook.id, hook.secret, order('stale'), { timestamp: nowSeconds(offset) });
        expect([answer.status, answer.body]).toEqual([401, { error: 'Timestamp outside the tolerance' }]);
      }
    });

    it('answers 401 Invalid signature for a missing, malformed or wrong signature, and runs nothing', async () => {
      const before = await runsOf(chatbot);
      const body = JSON.stringify(order('forged'));
      const cases: Array<string | null> = [null, '', 'sha256=', signDelivery('another-secret-0123456789', body), signDelivery(hook.secret, body).toUpperCase(), signDelivery(hook.secret, `${body} `)];
      for (const signature of cases) {
        const answer = await deliver(http, hook.id, hook.secret, body, { signature });
        expect([signature, answer.status, answer.body]).toEqual([signature, 401, { error: 'Invalid signature' }]);
      }
      // A body signature sent with a timestamp: the timestamp is part of what must be signed.
      const answer = await deliver(http, hook.id, hook.secret, body, { signature: signDelivery(hook.secret, body), timestamp: nowSeconds() });
      expect([answer.status, answer.body]).toEqual([401, { error: 'Invalid signature' }]);
      expect(await runsOf(chatbot)).toBe(before);
    });

    it('answers a repeated X-Runline-Delivery within 24 h with 409 and the first run, and runs it once even when repeats race', async () => {
      const deliveryId = `evt-${randomUUID()}`;
      const first = await deliver(http, hook.id, hook.secret, order('d1'), { deliveryId });
      expect(first.status).toBe(202);
      const again = await deliver(http, hook.id, hook.secret, order('d1'), { deliveryId, timestamp: nowSeconds() });
      expect([again.status, again.body]).toEqual([409, { error: 'Delivery already received', invocationId: first.body.invocationId }]);

      const racing = `evt-${randomUUID()}`;
      const answers = await Promise.all(Array.from({ length: 10 }, () => deliver(http, hook.id, hook.secret, order('race'), { deliveryId: racing })));
      expect(answers.filter((answer) => answer.status === 202)).toHaveLength(1);
      expect(answers.filter((answer) => answer.status === 409)).toHaveLength(9);
      expect(new Set(answers.map((answer) => answer.body.invocationId)).size).toBe(1);
      const runs = await sql<{ n: number }>(`SELECT count(*)::int AS n FROM invocation.invocation_views WHERE project_id = $1 AND document->'requestPayload'->>'orderId' = 'A-race'`, [
        chatbot.projectId,
      ]);
      expect(runs[0]!.n).toBe(1);
    });

    it('runs a delivery id again once its 24 hours are over, once per window, also when repeats race', async () => {
      // The run's key dates the delivery id's first arrival: moved back by a day and a second.
      const age = async (invocationId: string) => {
        const aged = await sql<{ key: string }>(
          `UPDATE invocation.idempotency_keys SET created_at = now() - interval '24 hours 1 second' WHERE invocation_id = $1 RETURNING key`,
          [invocationId],
        );
        expect(aged).toEqual([{ key: expect.stringMatching(/^hook:[0-9a-f-]{36}(\.\d+)?$/) }]);
      };
      const deliveryId = `evt-${randomUUID()}`;
      const first = await deliver(http, hook.id, hook.secret, order('old'), { deliveryId });
      expect(first.status).toBe(202);
      await age(first.body.invocationId!);
      const later = await deliver(http, hook.id, hook.secret, order('old'), { deliveryId });
      expect(later.status).toBe(202);
      expect(later.body.invocationId).not.toBe(first.body.invocationId);
      const repeat = await deliver(http, hook.id, hook.secret, order('old'), { deliveryId });
      expect([repeat.status, repeat.body]).toEqual([409, { error: 'Delivery already received', invocationId: later.body.invocationId }]);

      await age(later.body.invocationId!);
      const racing = await Promise.all(Array.from({ length: 6 }, () => deliver(http, hook.id, hook.secret, order('old'), { deliveryId })));
      const accepted = racing.filter((answer) => answer.status === 202);
      expect(accepted).toHaveLength(1);
      expect(racing.filter((answer) => answer.status === 409)).toHaveLength(5);
      const third = accepted[0]!.body.invocationId;
      expect(new Set(racing.map((answer) => answer.body.invocationId))).toEqual(new Set([third]));
      expect([first.body.invocationId, later.body.invocationId]).not.toContain(third);
    });

    it('answers 405 with Allow: POST to any other method', async () => {
      for (const method of ['GET', 'PUT', 'PATCH', 'DELETE']) {
        const answer = await deliver(http, hook.id, hook.secret, order('m'), { method });
        expect([method, answer.status, answer.headers.get('allow'), answer.body]).toEqual([method, 405, 'POST', { error: 'Method not allowed' }]);
      }
    });

    it('answers 404 Webhook not found for an id that never existed, 410 Webhook has been revoked once revoked', async () => {
      for (const id of [randomUUID(), 'nope']) {
        const answer = await deliver(http, id, hook.secret, order('x'));
        expect([answer.status, answer.body]).toEqual([404, { error: 'Webhook not found' }]);
      }
      const doomed = await createHook(http, chatbot, { name: 'doomed' });
      expect((await deliver(http, doomed.id, doomed.secret, order('before'))).status).toBe(202);
      expect((await http.delete(`${hooksPath(chatbot)}/${doomed.id}`, { bearer: chatbot.ownerJwt })).status).toBe(204);
      const after = await deliver(http, doomed.id, doomed.secret, order('after'));
      expect([after.status, after.body]).toEqual([410, { error: 'Webhook has been revoked' }]);
    });

    it('answers 413 Payload too large over 256 KiB (also past the gateway’s own body limit) and takes 256 KiB', async () => {
      const sized = (bytes: number) => {
        const base = JSON.stringify({ ...order('big'), pad: '' });
        return JSON.stringify({ ...order('big'), pad: 'x'.repeat(bytes - base.length) });
      };
      expect(Buffer.byteLength(sized(256 * 1024))).toBe(256 * 1024);
      expect((await deliver(http, hook.id, hook.secret, sized(256 * 1024))).status).toBe(202);
      for (const bytes of [256 * 1024 + 1, 1024 * 1024 + 1]) {
        const answer = await deliver(http, hook.id, hook.secret, sized(bytes));
        expect([bytes, answer.status, answer.body]).toEqual([bytes, 413, { error: 'Payload too large' }]);
      }
    });

    it('answers 400 for a body that is not a JSON object, after the signature', async () => {
      const cases: Array<[string, string]> = [
        ['{"orderId": ', 'Request body must be valid JSON'],
        ['', 'Request body must be valid JSON'],
        ['[1,2]', 'Request body must be a JSON object'],
        ['"text"', 'Request body must be a JSON object'],
      ];
      for (const [body, error] of cases) {
        const answer = await deliver(http, hook.id, hook.secret, body);
        expect([body, answer.status, answer.body]).toEqual([body, 400, { error }]);
      }
      const unsigned = await deliver(http, hook.id, hook.secret, '{"orderId": ', { signature: null });
      expect([unsigned.status, unsigned.body]).toEqual([401, { error: 'Invalid signature' }]);
    });

    it('answers 429 Rate limit exceeded past the hook’s own limit, with Retry-After', async () => {
      const limited = await createHook(http, chatbot, { name: 'limited', rateLimitPerMinute: 2 });
      const answers = [];
      for (let i = 0; i < 3; i++) answers.push(await deliver(http, limited.id, limited.secret, order(`rl${i}`)));
      expect(answers.map((answer) => answer.status)).toEqual([202, 202, 429]);
      expect(answers[2]!.body).toEqual({ error: 'Rate limit exceeded' });
      expect(Number(answers[2]!.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect(answers[0]!.headers.get('x-ratelimit-limit')).toBe('2');
      // Another hook of the same project has its own count.
      expect((await deliver(http, hook.id, hook.secret, order('other'))).status).toBe(202);
    });

    it('answers 403 while the project’s master switch is off', async () => {
      const project = await createPublishedProject(http, 'CHATBOT');
      const own = await createHook(http, project);
      const settings = `/v1/orgs/${project.orgId}/projects/${project.projectId}/api-settings`;
      expect((await http.patch(settings, { externalApiEnabled: false }, { bearer: project.ownerJwt })).status).toBe(200);
      const answer = await deliver(http, own.id, own.secret, order('off'));
      expect([answer.status, answer.body]).toEqual([403, { error: 'External API access is disabled for this project' }]);
      expect((await http.patch(settings, { externalApiEnabled: true }, { bearer: project.ownerJwt })).status).toBe(200);
      expect((await deliver(http, own.id, own.secret, order('on'))).status).toBe(202);
    });

    it('answers 404 Webhook not found once the hook’s project is deleted', async () => {
      const project = await createPublishedProject(http, 'CHATBOT');
      const own = await createHook(http, project);
      expect((await http.delete(`/v1/orgs/${project.orgId}/projects/${project.projectId}`, { bearer: project.ownerJwt })).status).toBe(204);
      const answer = await deliver(http, own.id, own.secret, order('gone'));
      expect([answer.status, answer.body]).toEqual([404, { error: 'Webhook not found' }]);
    });
  });

  describe('automations and failed trigger checks', () => {
    it('runs an automation’s workflow with payload = the body', async () => {
      const project = await createPublishedProject(http, 'AUTOMATION');
      const hook = await createHook(http, project);
      const answer = await deliver(http, hook.id, hook.secret, { orderId: 'A-7', amount: 3 });
      expect(answer.status).toBe(202);
      const row = await finished(answer.body.invocationId!);
      expect(row).toMatchObject({ status: 'SUCCEEDED', mode: 'ASYNC', target: 'AUTOMATION', source: 'WEBHOOK', result: { ok: true, orderId: 'A-7' } });
    });

    it('answers 422 with the reasons, keeps the body as a dead letter named after the hook, and replays it once the definition is fixed', async () => {
      const project = await createPublishedProject(http, 'AUTOMATION');
      const hook = await createHook(http, project, { name: 'crm-hook' });
      const answer = await deliver(http, hook.id, hook.secret, { orderId: 'A-9' });
      expect(answer.status).toBe(422);
      expect(answer.body).toEqual({ error: 'Payload is missing required keys: amount', reasons: ['Payload is missing required keys: amount'], invocationId: expect.any(String) });

      const { token } = await issueToken(http, project, ['automation:trigger']);
      const lettersPath = `/v1/orgs/${project.orgId}/automations/${project.projectId}/dead-letters`;
      const letter = await eventually('the dead letter', async () => {
        const page = await http.get<{ data: Array<Record<string, unknown> & { id: string }> }>(lettersPath, { bearer: token });
        return page.body.data[0];
      });
      expect(letter).toMatchObject({
        source: 'crm-hook',
        targetType: 'webhook',
        failureReason: 'Payload is missing required keys: amount',
        replayedAt: null,
        requestPayload: { payload: { orderId: 'A-9' } },
      });

      await publishDefinition(http, project, {
        ...VALID_AUTOMATION_DEFINITION,
        workflow: { ...VALID_AUTOMATION_DEFINITION.workflow, trigger: { externalEnabled: true, key: 'external_event', expectedPayload: { orderId: '' } } },
      });
      const replayed = await http.post(`${lettersPath}?id=${letter.id}`, {}, { bearer: token });
      expect([replayed.status, replayed.body]).toEqual([200, { success: true }]);
    });

    it('answers 422 for a chatbot whose flow trigger is not enabled, with the dead letter of target type webhook', async () => {
      const project = await createProject(http, 'CHATBOT');
      await publishDefinition(http, project, { ...VALID_CHATBOT_DEFINITION, flow: { ...VALID_CHATBOT_DEFINITION.flow, trigger: { externalEnabled: false, key: 'external_event' } } });
      const hook = await createHook(http, project, { name: 'disabled-trigger' });
      const answer = await deliver(http, hook.id, hook.secret, { event: 'e', customerId: 'c', orderId: 'A-1' });
      expect([answer.status, answer.body.error, answer.body.reasons]).toEqual([422, 'External trigger is not enabled on the Trigger node', ['External trigger is not enabled on the Trigger node']]);
      const { token } = await issueToken(http, project, ['flow:trigger']);
      const letters = await eventually('the dead letter', async () => {
        const page = await http.get<{ data: Array<Record<string, unknown>> }>(`/v1/orgs/${project.orgId}/flows/${project.projectId}/dead-letters`, { bearer: token });
        return page.body.data.length > 0 ? page.body.data : undefined;
      });
      expect(letters).toEqual([expect.objectContaining({ source: 'disabled-trigger', targetType: 'webhook', requestPayload: { event: 'e', customerId: 'c', orderId: 'A-1' } })]);
    });
  });

  it('never shows a hook secret in a log line, a list answer or the database in clear', async () => {
    const project = await createPublishedProject(http, 'CHATBOT');
    const secret = `log-probe-${randomUUID()}`;
    const hook = await createHook(http, project, { name: 'probe', secret });
    const generated = await createHook(http, project, { name: 'generated' });
    await deliver(http, hook.id, secret, { event: 'e', customerId: 'c' });
    await deliver(http, hook.id, secret, { event: 'e', customerId: 'c' }, { signature: 'sha256=00' });
    await deliver(http, generated.id, generated.secret, { event: 'e', customerId: 'c' });
    const listed = await http.get(hooksPath(project), { bearer: project.ownerJwt });
    expect(logText.length).toBeGreaterThan(0);
    for (const value of [secret, generated.secret]) {
      expect(logText).not.toContain(value);
      expect(JSON.stringify(listed.body)).not.toContain(value);
      const stored = await sql<{ sealed: string }>(`SELECT sealed_secret AS sealed FROM webhook.inbound_hooks WHERE project_id = $1`, [project.projectId]);
      for (const row of stored) expect(row.sealed).not.toContain(value);
    }
  });
});

/** A counter's value on a service's /metrics (0 before its first count); `label` like `verdict="verified"`. */
async function counterValue(serviceUrl: string, name: string, label = ''): Promise<number> {
  const text = await (await fetch(`${serviceUrl}/metrics`)).text();
  const line = text.split('\n').find((candidate) => candidate.startsWith(`${name}{`) && candidate.includes(label));
  return line ? Number(line.slice(line.lastIndexOf(' ') + 1)) : 0;
}

const orderBody = (n: number | string) => ({ event: 'order.created', customerId: `c-${n}`, orderId: `A-${n}` });

/**
 * The gateway verifies an inbound hook's deliveries from its own copy of the hook: no request to
 * the webhook service while the project's config version stands, and a reload once it moves. A
 * TTL far longer than the tests, so only the version decides here.
 */
describe('inbound hooks verified from the gateway’s copy', () => {
  let system: TestSystem;
  let http: HttpClient;
  let project: ProjectFixture;
  const hookLoads = () => counterValue(system.url('gateway'), 'runline_gateway_hook_loads_total');
  const verdicts = (service: string, verdict: string) => counterValue(system.url(service), 'runline_webhook_deliveries_total', `verdict="${verdict}"`);
  const settingsPath = () => `/v1/orgs/${project.orgId}/projects/${project.projectId}/api-settings`;

  beforeAll(async () => {
    system = await startTestSystem([gatewayService, invocationService, webhookService], { environment: { ACCESS_CACHE_TTL_MS: '60000' } });
    http = new HttpClient(system.url('gateway'));
    project = await createPublishedProject(http, 'CHATBOT');
    expect((await http.patch(settingsPath(), { defaultEnrollmentPolicy: 'EVERY_MATCH' }, { bearer: project.ownerJwt })).status).toBe(200);
  });
  afterAll(async () => {
    await system?.stop();
  });

  it('loads a hook on its first delivery, then verifies the next ones with no request to the webhook service, and counts each verdict', async () => {
    const hook = await createHook(http, project, { name: 'copied' });
    const before = await hookLoads();
    expect((await deliver(http, hook.id, hook.secret, orderBody('first'))).status).toBe(202);
    const loads = await hookLoads();
    expect(loads).toBeGreaterThan(before);
    const counted = {
      verified: await verdicts('gateway', 'verified'),
      invalid: await verdicts('gateway', 'invalid_signature'),
      stale: await verdicts('gateway', 'stale_timestamp'),
      atWebhookService: await verdicts('webhook', 'verified'),
    };

    for (let i = 0; i < 5; i++) {
      const deliveryId = `copy-${randomUUID()}`;
      expect((await deliver(http, hook.id, hook.secret, orderBody(`copy${i}`), { deliveryId, timestamp: nowSeconds() })).status).toBe(202);
      expect(await deliver(http, hook.id, hook.secret, orderBody(`copy${i}`), { deliveryId })).toMatchObject({ status: 409, body: { error: 'Delivery already received' } });
    }
    expect(await deliver(http, hook.id, 'another-secret-0123456789', orderBody('forged'))).toMatchObject({ status: 401, body: { error: 'Invalid signature' } });
    expect(await deliver(http, hook.id, hook.secret, orderBody('stale'), { timestamp: nowSeconds(-400) })).toMatchObject({
      status: 401,
      body: { error: 'Timestamp outside the tolerance' },
    });

    expect(await hookLoads()).toBe(loads);
    expect(await verdicts('gateway', 'verified')).toBe(counted.verified + 10);
    expect(await verdicts('gateway', 'invalid_signature')).toBe(counted.invalid + 1);
    expect(await verdicts('gateway', 'stale_timestamp')).toBe(counted.stale + 1);
    expect(await verdicts('webhook', 'verified')).toBe(counted.atWebhookService);
  });

  it('loads the hook again once the project’s config version moves (any change of the project), once', async () => {
    const hook = await createHook(http, project, { name: 'versioned' });
    expect((await deliver(http, hook.id, hook.secret, orderBody('v0'))).status).toBe(202);
    for (const rateLimitPerMinute of [5000, 6000]) {
      const loads = await hookLoads();
      expect((await http.patch(settingsPath(), { rateLimitPerMinute }, { bearer: project.ownerJwt })).status).toBe(200);
      for (let i = 0; i < 3; i++) expect((await deliver(http, hook.id, hook.secret, orderBody(`v${rateLimitPerMinute}-${i}`))).status).toBe(202);
      expect(await hookLoads()).toBe(loads + 1);
    }
  });

  it('answers 410 to the delivery right after a revocation, however many deliveries the copy took before', async () => {
    for (let i = 0; i < 5; i++) {
      const hook = await createHook(http, project, { name: `revoked ${i}` });
      for (let j = 0; j < 3; j++) expect((await deliver(http, hook.id, hook.secret, orderBody(`r${i}-${j}`))).status).toBe(202);
      expect((await http.delete(`/v1/orgs/${project.orgId}/projects/${project.projectId}/webhooks/${hook.id}`, { bearer: project.ownerJwt })).status).toBe(204);
      expect(await deliver(http, hook.id, hook.secret, orderBody(`r${i}-after`))).toMatchObject({ status: 410, body: { error: 'Webhook has been revoked' } });
    }
  });

  it('commits each revocation with a new config version of the project, as an event the other services apply', async () => {
    const versionOf = async () =>
      (await queryDatabase(system.database.url, 'SELECT config_version FROM gateway.projects WHERE id = $1', [project.projectId]))[0] as { config_version: number };
    const hook = await createHook(http, project, { name: 'versioned revoke' });
    const before = (await versionOf()).config_version;
    expect((await http.delete(`/v1/orgs/${project.orgId}/projects/${project.projectId}/webhooks/${hook.id}`, { bearer: project.ownerJwt })).status).toBe(204);
    expect((await versionOf()).config_version).toBe(before + 1);
    // Handed to the invocation service before the revocation was answered: its copy is already there.
    const copies = await queryDatabase(system.database.url, 'SELECT config_version FROM invocation.project_copies WHERE project_id = $1', [project.projectId]);
    expect(copies).toEqual([{ config_version: before + 1 }]);
  });
});

/**
 * The webhook service stopped: the gateway's copies of hooks still verify their deliveries (also
 * past their TTL, while the project's version stands); what needs the webhook service (an id
 * the gateway holds no copy of, a copy made stale by a change) answers 503.
 */
describe('inbound hooks once the webhook service has stopped', () => {
  const TTL_MS = 300;
  let system: TestSystem;
  let http: HttpClient;
  beforeAll(async () => {
    system = await startTestSystem([gatewayService, invocationService, webhookService], { environment: { ACCESS_CACHE_TTL_MS: String(TTL_MS) } });
    http = new HttpClient(system.url('gateway'));
  });
  afterAll(async () => {
    await system?.stop();
  });

  it('verifies a hook’s deliveries from the copy, and answers 503 where the copy cannot serve', async () => {
    const project = await createPublishedProject(http, 'CHATBOT');
    const settings = `/v1/orgs/${project.orgId}/projects/${project.projectId}/api-settings`;
    expect((await http.patch(settings, { defaultEnrollmentPolicy: 'EVERY_MATCH' }, { bearer: project.ownerJwt })).status).toBe(200);
    const hook = await createHook(http, project, { name: 'outlives its service' });
    expect((await deliver(http, hook.id, hook.secret, orderBody('up'))).status).toBe(202);

    await system.services.get('webhook')!.stop();
    system.services.delete('webhook');
    await new Promise((resolve) => setTimeout(resolve, TTL_MS + 100));

    const answer = await deliver(http, hook.id, hook.secret, orderBody('down'), { deliveryId: `down-${randomUUID()}`, timestamp: nowSeconds() });
    expect([answer.status, answer.body]).toEqual([202, { invocationId: expect.any(String), status: 'QUEUED' }]);
    expect(await deliver(http, hook.id, 'another-secret-0123456789', orderBody('forged'))).toMatchObject({ status: 401, body: { error: 'Invalid signature' } });
    expect(await deliver(http, randomUUID(), hook.secret, orderBody('unknown'))).toMatchObject({ status: 503, body: { error: 'Webhook service unavailable, retry shortly' } });

    // A change of the project makes the copy stale, and a stale copy is never used.
    expect((await http.patch(settings, { rateLimitPerMinute: 5000 }, { bearer: project.ownerJwt })).status).toBe(200);
    expect(await deliver(http, hook.id, hook.secret, orderBody('stale copy'))).toMatchObject({ status: 503, body: { error: 'Webhook service unavailable, retry shortly' } });
  });
});

/** Without a webhook service to ask, hook routes answer 503 at once (nobody is listening). */
describe('inbound hooks while the webhook service is down', () => {
  let system: TestSystem;
  let http: HttpClient;
  beforeAll(async () => {
    system = await startTestSystem([gatewayService, invocationService]);
    http = new HttpClient(system.url('gateway'));
  });
  afterAll(async () => {
    await system?.stop();
  });

  it('answers 503 Webhook service unavailable, retry shortly, to the console and to a delivery', async () => {
    const project = await createPublishedProject(http, 'CHATBOT');
    const create = await http.post(`/v1/orgs/${project.orgId}/projects/${project.projectId}/webhooks`, { name: 'x' }, { bearer: project.ownerJwt });
    expect([create.status, create.body]).toEqual([503, { error: 'Webhook service unavailable, retry shortly' }]);
    const delivery = await deliver(http, randomUUID(), 'any-secret-0123456789', { event: 'e' });
    expect([delivery.status, delivery.body]).toEqual([503, { error: 'Webhook service unavailable, retry shortly' }]);
  });
});
