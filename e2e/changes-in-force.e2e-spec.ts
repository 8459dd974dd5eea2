import {
  consoleJwt,
  createTestDatabase,
  deletePrefixedStreams,
  HttpClient,
  TEST_CONSOLE_JWT_SECRET,
  TEST_SECRETS_KEY,
  testNatsUrl,
  uniqueBusPrefix,
  type TestDatabase,
} from '@runline/testing';
import { createHmac } from 'node:crypto';
import { createPublishedProject, issueToken, publishDefinition, type ProjectFixture } from './gateway-fixtures.js';
import { selfSignedCertificate, startHttpsReceiver, type HttpsReceiver, type TestCertificate } from './support/https-receiver.js';
import { createHook, deliver } from './support/hook-deliveries.js';
import { PollingEndpoint } from './support/polling-endpoint.js';
import { eventually } from './support/lifecycle-support.js';
import { compiledEntry, freePort, runNode, waitForOk, type RunningProcess } from './support/processes.js';
import { runPath, type Json } from './support/runs-support.js';

/**
 * A change answered by one gateway replica is obeyed by the very next request to the other,
 * sent at once, with no wait in between: two gateway processes and every other service as
 * separate processes on one database and one NATS. Each pair runs REPEAT times.
 */
const REPEAT = 20;
const ADMIN = consoleJwt('changes-admin', { roles: ['platform-admin'] });
const body = { event: 'order.created', customerId: 'c-1', orderId: '42', enrollmentPolicy: 'EVERY_MATCH' };

describe('a change is in force for the next request on every replica', () => {
  let database: TestDatabase;
  const busPrefix = uniqueBusPrefix();
  const processes: RunningProcess[] = [];
  let a: HttpClient;
  let b: HttpClient;
  let certificate: TestCertificate;
  let receiver: HttpsReceiver;
  let endpoint: PollingEndpoint;

  beforeAll(async () => {
    certificate = await selfSignedCertificate();
    receiver = await startHttpsReceiver(certificate);
    endpoint = await PollingEndpoint.start();
    database = await createTestDatabase();
    const environment: NodeJS.ProcessEnv = {
      PATH: process.env.PATH,
      DATABASE_URL: database.url,
      NATS_URL: testNatsUrl(),
      BUS_PREFIX: busPrefix,
      HOST: '127.0.0.1',
      CONSOLE_JWT_SECRET: TEST_CONSOLE_JWT_SECRET,
      SECRETS_KEY: TEST_SECRETS_KEY,
      LOG_LEVEL: 'warn',
      OUTBOUND_ALLOWED_CIDRS: '127.0.0.0/8',
      NODE_EXTRA_CA_CERTS: certificate.caFile,
    };
    const services = ['gateway', 'invocation', 'scheduler', 'polling', 'dead-letter', 'callback', 'webhook'];
    for (const name of services) {
      const migration = runNode(compiledEntry(`services/${name}/main.js`), ['migrate'], environment);
      expect(await migration.exit()).toBe(0);
    }
    const urls = await Promise.all(
      ['gateway', ...services].map(async (name) => {
        const port = await freePort();
        const started = runNode(compiledEntry(`services/${name}/main.js`), [], { ...environment, PORT: String(port) });
        processes.push(started);
        const url = `http://127.0.0.1:${port}`;
        // Eight compiled processes start at once on a machine shared with another test worker: in CI they took more than 30 s.
        await waitForOk(`${url}/health/ready`, started, 90_000);
        return url;
      }),
    );
    a = new HttpClient(urls[0]!);
    b = new HttpClient(urls[1]!);
  }, 120_000);

  afterAll(async () => {
    await Promise.all(processes.map((started) => started.stop()));
    await deletePrefixedStreams(testNatsUrl(), busPrefix);
    await database?.drop();
    await receiver?.close();
    await certificate?.remove();
    await endpoint?.close();
  });

  const settingsPath = (project: ProjectFixture) => `/v1/orgs/${project.orgId}/projects/${project.projectId}/api-settings`;

  async function changeSettings(project: ProjectFixture, changes: Json): Promise<void> {
    const answer = await a.patch(settingsPath(project), changes, { bearer: project.ownerJwt });
    expect(answer.status).toBe(200);
  }

  it('the master switch', async () => {
    const project = await createPublishedProject(a, 'CHATBOT');
    const { token } = await issueToken(a, project, ['flow:trigger']);
    await changeSettings(project, { rateLimitPerMinute: 10_000 });
    for (let i = 0; i < REPEAT; i++) {
      await changeSettings(project, { externalApiEnabled: false });
      expect(await b.post(runPath('flowTriggerAsync', project), body, { bearer: token })).toMatchObject({
        status: 403,
        body: { error: 'External API access is disabled for this project' },
      });
      await changeSettings(project, { externalApiEnabled: true });
      expect((await b.post(runPath('flowTriggerAsync', project), body, { bearer: token })).status).toBe(202);
    }
  }, 120_000);

  it('a token revocation', async () => {
    const project = await createPublishedProject(a, 'CHATBOT');
    for (let i = 0; i < REPEAT; i++) {
      const { id, token } = await issueToken(a, project, ['flow:trigger']);
      // The other replica has the token in memory before it is revoked.
      expect((await b.post(runPath('flowTrigger', project), { ...body, dryRun: true }, { bearer: token })).status).toBe(200);
      expect((await a.delete(`/v1/orgs/${project.orgId}/projects/${project.projectId}/api-tokens/${id}`, { bearer: project.ownerJwt })).status).toBe(204);
      expect(await b.post(runPath('flowTrigger', project), { ...body, dryRun: true }, { bearer: token })).toMatchObject({
        status: 401,
        body: { error: 'Invalid API token' },
      });
    }
  }, 120_000);

  it('an inbound hook: created, then revoked', async () => {
    const project = await createPublishedProject(a, 'CHATBOT');
    for (let i = 0; i < REPEAT; i++) {
      const hook = await createHook(a, project, { name: `hook ${i}` });
      // A hook created on one replica takes deliveries on the other at once, until it is revoked.
      expect((await deliver(b, hook.id, hook.secret, body)).status).toBe(202);
      expect((await a.delete(`/v1/orgs/${project.orgId}/projects/${project.projectId}/webhooks/${hook.id}`, { bearer: project.ownerJwt })).status).toBe(204);
      expect(await deliver(b, hook.id, hook.secret, body)).toMatchObject({ status: 410, body: { error: 'Webhook has been revoked' } });
    }
  }, 120_000);

  it('a publish, for sync and async runs', async () => {
    const project = await createPublishedProject(a, 'AUTOMATION', returning('v0'));
    const { token } = await issueToken(a, project, ['automation:trigger']);
    await changeSettings(project, { rateLimitPerMinute: 10_000 });
    const payload = { event: 'order.created', payload: { orderId: '42', amount: 1 } };
    expect((await b.post(runPath('automationTrigger', project), payload, { bearer: token })).body).toMatchObject({ result: 'v0' });
    for (let i = 1; i <= REPEAT; i++) {
      await publishDefinition(a, project, returning(`v${i}`));
      expect(await b.post(runPath('automationTrigger', project), payload, { bearer: token })).toMatchObject({ status: 200, body: { result: `v${i}` } });
      const accepted = await b.post<{ invocationId: string }>(runPath('automationTriggerAsync', project), payload, { bearer: token });
      expect(accepted.status).toBe(202);
      const finished = await eventually('the async run to end', async () => {
        const read = await b.get<{ status: string; result: unknown }>(`/v1/orgs/${project.orgId}/external-invocations/${accepted.body.invocationId}`, { bearer: token });
        return read.body.status === 'SUCCEEDED' || read.body.status === 'FAILED' ? read.body : undefined;
      });
      expect(finished).toMatchObject({ status: 'SUCCEEDED', result: `v${i}` });
    }
  }, 180_000);

  it('the default on-error policy', async () => {
    const project = await createPublishedProject(a, 'AUTOMATION', failingThenReturning);
    const { token } = await issueToken(a, project, ['automation:trigger']);
    await changeSettings(project, { rateLimitPerMinute: 10_000 });
    const payload = { event: 'order.created', payload: { orderId: '42', amount: 1 } };
    for (let i = 0; i < REPEAT; i++) {
      await changeSettings(project, { defaultOnErrorPolicy: 'CONTINUE' });
      expect(await b.post(runPath('automationTrigger', project), payload, { bearer: token })).toMatchObject({ status: 200, body: { status: 'SUCCEEDED', result: 'after' } });
      await changeSettings(project, { defaultOnErrorPolicy: 'ABORT' });
      expect(await b.post(runPath('automationTrigger', project), payload, { bearer: token })).toMatchObject({ status: 500, body: { status: 'FAILED' } });
    }
  }, 120_000);

  it('the default enrollment policy', async () => {
    const project = await createPublishedProject(a, 'CHATBOT');
    const { token } = await issueToken(a, project, ['flow:trigger']);
    await changeSettings(project, { rateLimitPerMinute: 10_000 });
    const { enrollmentPolicy: _requested, ...unstated } = body;
    for (let i = 0; i < REPEAT; i++) {
      for (const policy of ['EVERY_MATCH', 'ONE_TIME']) {
        await changeSettings(project, { defaultEnrollmentPolicy: policy });
        const run = await b.post<{ invocationId: string }>(runPath('flowTrigger', project), { ...unstated, customerId: `c-${policy}-${i}` }, { bearer: token });
        expect(run.status).toBe(200);
        const read = await b.get(`/v1/orgs/${project.orgId}/external-invocations/${run.body.invocationId}`, { bearer: token });
        expect(read.body).toMatchObject({ enrollmentPolicy: policy });
      }
    }
  }, 120_000);

  it('a publish, for a dead-letter replay', async () => {
    // Version i fails, so its run becomes a dead letter; the fix published on one replica is
    // what the replay on the other runs (it reports under its own name).
    const failing = (i: number) => automationOf({ boom: { type: 'fail', error: `broken v${i}` } }, 'boom');
    const fixed = (i: number) =>
      automationOf(
        {
          report: { type: 'http', method: 'POST', url: `${endpoint.url}/seen/replay-v${i}`, body: 'payload', saveAs: 'reply', next: 'done' },
          done: { type: 'return', value: "'ok'" },
        },
        'report',
      );
    const project = await createPublishedProject(a, 'AUTOMATION', failing(0));
    const { token } = await issueToken(a, project, ['automation:trigger']);
    await changeSettings(project, { rateLimitPerMinute: 10_000 });
    const path = `/v1/orgs/${project.orgId}/automations/${project.projectId}`;
    for (let i = 1; i <= REPEAT; i++) {
      await publishDefinition(a, project, failing(i));
      const accepted = await b.post(`${path}/trigger-async`, { event: 'order', payload: { orderId: `o-${i}` } }, { bearer: token });
      expect(accepted.status).toBe(202);
      const letter = await eventually(`the dead letter of run ${i}`, async () => {
        const found = await b.get<{ data: Array<{ id: string; failureReason: string }> }>(`${path}/dead-letters`, { bearer: token });
        return found.body.data.find((row) => row.failureReason === `broken v${i}`);
      });
      await publishDefinition(a, project, fixed(i));
      const replayed = await b.post(`${path}/dead-letters?id=${letter.id}`, {}, { bearer: token });
      expect(replayed).toMatchObject({ status: 200, body: { success: true } });
      expect(endpoint.seen(`replay-v${i}`)).toEqual([{ orderId: `o-${i}` }]);
    }
  }, 180_000);

  it('the project rate limit', async () => {
    const project = await createPublishedProject(a, 'CHATBOT');
    const dry = { ...body, dryRun: true };
    for (let i = 0; i < REPEAT; i++) {
      // A fresh token starts with an empty window.
      const { token } = await issueToken(a, project, ['flow:trigger']);
      await changeSettings(project, { rateLimitPerMinute: 1000, rateLimitWindowMs: 3_600_000 });
      expect((await b.post(runPath('flowTrigger', project), dry, { bearer: token })).status).toBe(200);
      expect((await b.post(runPath('flowTrigger', project), dry, { bearer: token })).status).toBe(200);
      await changeSettings(project, { rateLimitPerMinute: 2 });
      expect(await b.post(runPath('flowTrigger', project), dry, { bearer: token })).toMatchObject({ status: 429, body: { error: 'Rate limit exceeded' } });
      await changeSettings(project, { rateLimitPerMinute: 1000 });
      expect((await b.post(runPath('flowTrigger', project), dry, { bearer: token })).status).toBe(200);
    }
  }, 120_000);

  it('the plan quota', async () => {
    const project = await createPublishedProject(a, 'CHATBOT');
    const { token } = await issueToken(a, project, ['flow:trigger']);
    await changeSettings(project, { rateLimitPerMinute: 10_000 });
    const setQuota = async (monthlyQuota: number) => {
      const answer = await a.put(`/v1/orgs/${project.orgId}/plan`, { monthlyQuota, rateLimitPerMinute: null, rateLimitWindowMs: null, renewalDay: null }, { bearer: ADMIN });
      expect(answer.status).toBe(200);
    };
    for (let used = 0; used < REPEAT; ) {
      await setQuota(used);
      expect(await b.post(runPath('flowTriggerAsync', project), body, { bearer: token })).toMatchObject({
        status: 429,
        body: { error: 'Monthly API call quota exceeded' },
      });
      await setQuota(used + 1);
      expect((await b.post(runPath('flowTriggerAsync', project), body, { bearer: token })).status).toBe(202);
      used += 1;
    }
  }, 120_000);

  it('the default callback URL and secret', async () => {
    const project = await createPublishedProject(a, 'AUTOMATION');
    const { token } = await issueToken(a, project, ['automation:trigger']);
    await changeSettings(project, { rateLimitPerMinute: 10_000 });
    for (let i = 0; i < REPEAT; i++) {
      const secret = `default-secret-${i}`;
      await changeSettings(project, { defaultCallbackUrl: `${receiver.url}/default-${i}`, defaultCallbackSecret: secret });
      const accepted = await b.post<{ invocationId: string }>(runPath('automationTriggerAsync', project), { payload: { orderId: `cb-${i}`, amount: 1 } }, { bearer: token });
      expect(accepted.status).toBe(202);
      const [callback] = await eventually(`the callback of run ${i}`, async () => {
        const got = receiver.at(`/default-${i}`);
        return got.length > 0 ? got : undefined;
      });
      expect(JSON.parse(callback!.raw.toString())).toMatchObject({ invocationId: accepted.body.invocationId });
      expect(callback!.headers['x-service-signature']).toBe(createHmac('sha256', secret).update(callback!.raw).digest('hex'));
    }
  }, 120_000);

  it('a publish, for the next polled item', async () => {
    const pollKey = 'published';
    const reporting = (version: number) => ({
      schemaVersion: 1,
      bot: { start: 'hello', nodes: { hello: { type: 'message', text: 'Hi', next: 'end' }, end: { type: 'end' } } },
      flow: {
        trigger: { externalEnabled: true, key: 'external_event' },
        start: 'report',
        nodes: {
          report: { type: 'http', method: 'POST', url: `${endpoint.url}/seen/v${version}`, body: 'payload', saveAs: 'reply', next: 'done' },
          done: { type: 'end' },
        },
      },
    });
    const project = await createPublishedProject(a, 'CHATBOT', reporting(0));
    const { token } = await issueToken(a, project, ['flow:trigger']);
    await changeSettings(project, { defaultEnrollmentPolicy: 'EVERY_MATCH' });
    // Every poll returns one new item, numbered by the poll.
    const items = Array.from({ length: 500 }, (_, call) => ({ json: [{ id: call + 1, event: 'order.created', customerId: `c-${call + 1}` }] }));
    const url = endpoint.script('/api/published', items);
    expect((await b.post(`/v1/orgs/${project.orgId}/flows/${project.projectId}/polling`, { source: 's', pollKey, pollEndpoint: url, intervalMs: 1000 }, { bearer: token })).status).toBe(201);
    for (let version = 1; version <= REPEAT; version++) {
      await publishDefinition(a, project, reporting(version));
      const answeredAt = Date.now();
      // The first poll fetched after the publish was answered runs the new definition.
      const poll = await eventually(`a poll after publish ${version}`, async () => endpoint.callsTo('/api/published').find((call) => call.at > answeredAt), 5000);
      const itemId = endpoint.callsTo('/api/published').indexOf(poll) + 1;
      const reportedUnder = await eventually(`item ${itemId} to run`, async () => {
        for (let seen = 0; seen <= REPEAT; seen++) if (endpoint.seen(`v${seen}`).some((payload) => payload.id === itemId)) return seen;
        return undefined;
      });
      expect(reportedUnder).toBeGreaterThanOrEqual(version);
    }
  }, 180_000);

  it('a project deletion', async () => {
    for (let i = 0; i < REPEAT; i++) {
      const project = await createPublishedProject(a, 'CHATBOT');
      const { token } = await issueToken(a, project, ['flow:trigger']);
      expect((await b.post(runPath('flowTrigger', project), { ...body, dryRun: true }, { bearer: token })).status).toBe(200);
      expect((await a.delete(`/v1/orgs/${project.orgId}/projects/${project.projectId}`, { bearer: project.ownerJwt })).status).toBe(204);
      expect(await b.post(runPath('flowTrigger', project), { ...body, dryRun: true }, { bearer: token })).toMatchObject({
        status: 404,
        body: { error: 'Project not found' },
      });
    }
  }, 120_000);
});

/** An automation whose run returns `value`, so a run tells which version it ran. */
function returning(value: string): object {
  return {
    schemaVersion: 1,
    workflow: {
      trigger: { externalEnabled: true, key: 'external_event', expectedPayload: { orderId: '', amount: 0 } },
      start: 'n1',
      nodes: { n1: { type: 'return', value: `'${value}'` } },
    },
  };
}

/** A failing `set` node before a return: CONTINUE returns 'after', ABORT fails. */
const failingThenReturning = {
  schemaVersion: 1,
  workflow: {
    trigger: { externalEnabled: true, key: 'external_event', expectedPayload: { orderId: '', amount: 0 } },
    start: 'broken',
    nodes: {
      broken: { type: 'set', values: { sum: "payload.amount + 'x'" }, next: 'done' },
      done: { type: 'return', value: "'after'" },
    },
  },
};

/** An automation of `nodes` starting at `start`, one attempt per run. */
function automationOf(nodes: object, start: string): object {
  return {
    schemaVersion: 1,
    workflow: {
      trigger: { externalEnabled: true, key: 'external_event', expectedPayload: { orderId: '' }, retry: { maxAttempts: 1, backoffSeconds: 1 } },
      start,
      nodes,
    },
  };
}
