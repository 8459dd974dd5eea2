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
import pg from 'pg';
import { VALID_CHATBOT_DEFINITION } from './gateway-fixtures.js';
import { deliver } from './support/hook-deliveries.js';
import { compiledEntry, freePort, runNode, waitForOk, type RunningProcess } from './support/processes.js';

const SERVICES = ['gateway', 'invocation', 'scheduler', 'polling', 'dead-letter', 'callback', 'webhook'];

/**
 * Production shape: the seven services as seven processes (the compiled `dist/services/<name>/main.js`),
 * on real PostgreSQL and NATS, talking only through the bus.
 */
describe('seven services as separate processes', () => {
  let database: TestDatabase;
  const busPrefix = uniqueBusPrefix();
  const processes = new Map<string, { process: RunningProcess; url: string }>();
  let environment: NodeJS.ProcessEnv;

  beforeAll(async () => {
    database = await createTestDatabase();
    environment = {
      PATH: process.env.PATH,
      DATABASE_URL: database.url,
      NATS_URL: testNatsUrl(),
      BUS_PREFIX: busPrefix,
      HOST: '127.0.0.1',
      CONSOLE_JWT_SECRET: TEST_CONSOLE_JWT_SECRET,
      SECRETS_KEY: TEST_SECRETS_KEY,
      LOG_LEVEL: 'warn',
    };
    // The explicit migration step, as a Kubernetes Job would run it.
    for (const name of SERVICES) {
      const migration = runNode(compiledEntry(`services/${name}/main.js`), ['migrate'], environment);
      expect(await migration.exit()).toBe(0);
    }
    // One after the other: seven Node processes booting at once on a loaded two-core machine
    // share the CPU seven ways, and one of them missed its readiness deadline in CI.
    for (const name of SERVICES) {
      const port = await freePort();
      const started = runNode(compiledEntry(`services/${name}/main.js`), [], { ...environment, PORT: String(port) });
      const url = `http://127.0.0.1:${port}`;
      processes.set(name, { process: started, url });
      await waitForOk(`${url}/health/ready`, started);
    }
  }, 300_000);

  afterAll(async () => {
    await Promise.all([...processes.values()].map(({ process }) => process.stop()));
    await deletePrefixedStreams(testNatsUrl(), busPrefix);
    await database?.drop();
  });

  it('every service is live and ready, and exposes Prometheus metrics', async () => {
    for (const [name, { url }] of processes) {
      expect((await fetch(`${url}/health/live`)).status).toBe(200);
      const ready = await (await fetch(`${url}/health/ready`)).json();
      expect(ready).toMatchObject({ status: 'ok', info: { database: { status: 'up' }, bus: { status: 'up' } } });
      const metrics = await (await fetch(`${url}/metrics`)).text();
      expect(metrics).toContain(`service="${name}"`);
      expect(metrics).toMatch(/^runline_process_cpu_seconds_total/m);
    }
  });

  it('puts a request through the gateway to the invocation service and back', async () => {
    const http = new HttpClient(processes.get('gateway')!.url);
    const owner = consoleJwt('multi-process-owner');
    const org = await http.post<{ orgId: string }>('/v1/orgs', { name: 'Multi' }, { bearer: owner });
    const project = await http.post<{ projectId: string }>(`/v1/orgs/${org.body.orgId}/projects`, { name: 'Bot', type: 'CHATBOT' }, { bearer: owner });
    const token = await http.post<{ token: string }>(
      `/v1/orgs/${org.body.orgId}/projects/${project.body.projectId}/api-tokens`,
      { name: 't', scopes: ['flow:trigger'] },
      { bearer: owner },
    );
    const answer = await http.get(`/v1/orgs/${org.body.orgId}/external-invocations/00000000-0000-4000-8000-000000000000`, { bearer: token.body.token });
    expect(answer).toMatchObject({ status: 404, body: { error: 'Invocation not found' } });
  });

  it('carries the gateway\'s events to the invocation service through JetStream', async () => {
    const http = new HttpClient(processes.get('gateway')!.url);
    const owner = consoleJwt('multi-process-publisher');
    const org = await http.post<{ orgId: string }>('/v1/orgs', { name: 'Events' }, { bearer: owner });
    const project = await http.post<{ projectId: string }>(`/v1/orgs/${org.body.orgId}/projects`, { name: 'Bot', type: 'CHATBOT' }, { bearer: owner });
    const base = `/v1/orgs/${org.body.orgId}/projects/${project.body.projectId}`;
    await http.put(`${base}/definition`, { definition: VALID_CHATBOT_DEFINITION }, { bearer: owner });
    expect((await http.post(`${base}/publish`, undefined, { bearer: owner })).status).toBe(200);
    await http.patch(`${base}/api-settings`, { externalApiEnabled: false }, { bearer: owner });

    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    try {
      const deadline = Date.now() + 10_000;
      for (;;) {
        const { rows } = await client.query(
          'SELECT published_version, external_api_enabled FROM invocation.project_copies WHERE project_id = $1',
          [project.body.projectId],
        );
        if (rows[0]?.published_version === 1 && rows[0]?.external_api_enabled === false) break;
        if (Date.now() > deadline) throw new Error(`invocation's copy not updated: ${JSON.stringify(rows)}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    } finally {
      await client.end();
    }
  });

  it('puts a signed delivery to an inbound hook through the gateway and the webhook service, and counts it', async () => {
    const http = new HttpClient(processes.get('gateway')!.url);
    const owner = consoleJwt('multi-process-hooks');
    const org = await http.post<{ orgId: string }>('/v1/orgs', { name: 'Hooks' }, { bearer: owner });
    const project = await http.post<{ projectId: string }>(`/v1/orgs/${org.body.orgId}/projects`, { name: 'Bot', type: 'CHATBOT' }, { bearer: owner });
    const base = `/v1/orgs/${org.body.orgId}/projects/${project.body.projectId}`;
    await http.put(`${base}/definition`, { definition: VALID_CHATBOT_DEFINITION }, { bearer: owner });
    expect((await http.post(`${base}/publish`, undefined, { bearer: owner })).status).toBe(200);
    const hook = await http.post<{ id: string; secret: string }>(`${base}/webhooks`, { name: 'shop' }, { bearer: owner });
    expect(hook.status).toBe(201);
    const answer = await deliver(http, hook.body.id, hook.body.secret, { event: 'e', customerId: 'c', orderId: 'A-1' });
    expect(answer).toMatchObject({ status: 202, body: { status: 'QUEUED' } });
    // The gateway verifies an inbound hook's deliveries itself (from its copy of the hook) and counts them.
    const metrics = await (await fetch(`${processes.get('gateway')!.url}/metrics`)).text();
    expect(metrics).toMatch(/^runline_webhook_deliveries_total\{[^}]*verdict="verified"[^}]*\} 1$/m);
  });

  it('refuses to start with a bad environment, naming the variable', async () => {
    const { DATABASE_URL: _unset, ...withoutDatabase } = environment;
    const refused = runNode(compiledEntry('services/scheduler/main.js'), [], { ...withoutDatabase, PORT: '0', OUTBOUND_ALLOWED_CIDRS: '10.0.0.1' });
    expect(await refused.exit(30_000)).toBe(1);
    expect(refused.output()).toMatch(/DATABASE_URL/);
    expect(refused.output()).toMatch(/OUTBOUND_ALLOWED_CIDRS must be a comma-separated list of CIDR ranges/);
    const gatewayWithoutSecrets = runNode(compiledEntry('services/gateway/main.js'), [], { ...environment, PORT: '0', SECRETS_KEY: '' });
    expect(await gatewayWithoutSecrets.exit(30_000)).toBe(1);
    expect(gatewayWithoutSecrets.output()).toMatch(/SECRETS_KEY/);
    const webhookWithBadTolerance = runNode(compiledEntry('services/webhook/main.js'), [], { ...environment, PORT: '0', WEBHOOK_TIMESTAMP_TOLERANCE_SECONDS: 'soon' });
    expect(await webhookWithBadTolerance.exit(30_000)).toBe(1);
    expect(webhookWithBadTolerance.output()).toMatch(/WEBHOOK_TIMESTAMP_TOLERANCE_SECONDS/);
  });

  it('refuses to serve an unmigrated schema', async () => {
    const fresh = await createTestDatabase();
    try {
      const refused = runNode(compiledEntry('services/invocation/main.js'), [], { ...environment, DATABASE_URL: fresh.url, PORT: '0' });
      expect(await refused.exit(30_000)).not.toBe(0);
      expect(refused.output()).toMatch(/migrat/i);
    } finally {
      await fresh.drop();
    }
  });

  it('shuts every service down cleanly on SIGTERM', async () => {
    const codes = await Promise.all([...processes.values()].map(({ process }) => process.stop()));
    expect(codes).toEqual(SERVICES.map(() => 0));
  });
});
