import {
  createTestDatabase,
  deletePrefixedStreams,
  HttpClient,
  queryDatabase,
  TEST_CONSOLE_JWT_SECRET,
  TEST_SECRETS_KEY,
  testNatsUrl,
  uniqueBusPrefix,
  type TestDatabase,
} from '@runline/testing';
import { createPublishedProject, issueToken } from './gateway-fixtures.js';
import { eventually } from './support/lifecycle-support.js';
import { compiledEntry, freePort, runNode, waitForOk, type RunningProcess } from './support/processes.js';
import { runPath, type Json } from './support/runs-support.js';

/**
 * The spec allows counts per gateway instance; ours hold across replicas. Two gateway
 * processes (the compiled build) and an invocation process on one database and one NATS: a
 * token's limit is shared, whichever replica a request reaches.
 */
describe('rate limits across gateway replicas', () => {
  let database: TestDatabase;
  const busPrefix = uniqueBusPrefix();
  const processes: RunningProcess[] = [];
  const gateways: HttpClient[] = [];

  beforeAll(async () => {
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
    };
    for (const name of ['gateway', 'invocation']) {
      const migration = runNode(compiledEntry(`services/${name}/main.js`), ['migrate'], environment);
      expect(await migration.exit()).toBe(0);
    }
    await Promise.all(
      ['gateway', 'gateway', 'invocation'].map(async (name) => {
        const port = await freePort();
        const started = runNode(compiledEntry(`services/${name}/main.js`), [], { ...environment, PORT: String(port) });
        processes.push(started);
        const url = `http://127.0.0.1:${port}`;
        await waitForOk(`${url}/health/ready`, started);
        if (name === 'gateway') gateways.push(new HttpClient(url));
      }),
    );
  }, 120_000);

  afterAll(async () => {
    await Promise.all(processes.map((started) => started.stop()));
    await deletePrefixedStreams(testNatsUrl(), busPrefix);
    await database?.drop();
  });

  it('shares one limit between two gateway processes: exactly the limit is let through', async () => {
    const [first, second] = gateways as [HttpClient, HttpClient];
    const project = await createPublishedProject(first, 'CHATBOT');
    const { token } = await issueToken(first, project, ['flow:trigger']);
    // An hour's window, so the burst below cannot straddle two windows.
    const settings = await first.patch(`/v1/orgs/${project.orgId}/projects/${project.projectId}/api-settings`, {
      rateLimitPerMinute: 10,
      rateLimitWindowMs: 3_600_000,
    }, { bearer: project.ownerJwt });
    expect(settings.status).toBe(200);
    await eventually('the published definition to reach the invocation service', async () => {
      const rows = await queryDatabase(database.url, 'SELECT published_version FROM invocation.project_copies WHERE project_id = $1', [project.projectId]);
      return rows[0]?.published_version === 1 ? true : undefined;
    });

    const body = { event: 'order.created', customerId: 'c-1', orderId: '42', dryRun: true };
    const answers = await Promise.all(
      Array.from({ length: 30 }, (_, index) => (index % 2 === 0 ? first : second).post<Json>(runPath('flowTrigger', project), body, { bearer: token })),
    );
    const passed = answers.filter((answer) => answer.status === 200);
    const refused = answers.filter((answer) => answer.status === 429);
    expect(passed).toHaveLength(10);
    expect(refused).toHaveLength(20);
    for (const answer of refused) expect(answer.body).toEqual({ error: 'Rate limit exceeded' });
    // Each request let through had its own place in the shared window.
    const remaining = passed.map((answer) => Number(answer.headers.get('x-ratelimit-remaining'))).sort((a, b) => a - b);
    expect(remaining).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(answers.every((answer) => answer.headers.get('x-ratelimit-limit') === '10')).toBe(true);

    // A third request through either replica is refused until the window ends.
    expect((await second.post(runPath('flowTrigger', project), body, { bearer: token })).status).toBe(429);
    expect((await first.post(runPath('flowTrigger', project), body, { bearer: token })).status).toBe(429);

    // A larger limit, where replicas take places ahead in blocks: still never more than the
    // limit, every admitted request has a place of its own, and at most the places taken ahead
    // (a 16th of what was left, per replica) go unused.
    // In force on both replicas as soon as it is answered.
    await first.patch(`/v1/orgs/${project.orgId}/projects/${project.projectId}/api-settings`, { rateLimitPerMinute: 200 }, { bearer: project.ownerJwt });
    const asyncPath = runPath('flowTriggerAsync', project);
    const burst: Array<{ status: number; remaining: number }> = [];
    await Promise.all(
      [first, second].flatMap((client) =>
        Array.from({ length: 10 }, async () => {
          for (let i = 0; i < 15; i++) {
            const answer = await client.post(asyncPath, body, { bearer: token });
            burst.push({ status: answer.status, remaining: Number(answer.headers.get('x-ratelimit-remaining')) });
          }
        }),
      ),
    );
    const admitted = burst.filter((answer) => answer.status === 200);
    expect(burst.filter((answer) => answer.status !== 200 && answer.status !== 429)).toEqual([]);
    expect(admitted.length).toBeLessThanOrEqual(200);
    expect(admitted.length).toBeGreaterThanOrEqual(200 - 2 * Math.floor(200 / 16));
    expect(new Set(admitted.map((answer) => answer.remaining)).size).toBe(admitted.length);
  });
});
