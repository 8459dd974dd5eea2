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
import { createPublishedProject, issueToken, type ProjectFixture } from './gateway-fixtures.js';
import { eventually, startLocalServer, type LocalServer } from './support/lifecycle-support.js';
import { compiledEntry, freePort, runNode, waitForOk, type RunningProcess } from './support/processes.js';
import { chatbotDefinition, runPath, type Json } from './support/runs-support.js';

/** A turn lease this short lets the crash case below end in seconds (the default is 15 s). */
const RUN_LEASE_MS = 3000;

/**
 * The bot-session rule across replicas (DESIGN.md sections 13 and 15): the messages of one
 * session run one at a time on every replica, each seeing the state the previous one left. Two
 * gateway processes and two invocation processes (the compiled build) on one database and one
 * NATS; NATS spreads the requests over both invocation replicas (its queue group).
 */
describe('bot sessions across invocation replicas', () => {
  let database: TestDatabase;
  let endpoint: LocalServer;
  /** When set, the bots' `/hold` endpoint never answers (a turn stuck in its http node). */
  let hangHolds = false;
  const busPrefix = uniqueBusPrefix();
  const gateways: HttpClient[] = [];
  const invocations: Array<{ process: RunningProcess; url: string }> = [];
  const processes: RunningProcess[] = [];

  beforeAll(async () => {
    database = await createTestDatabase();
    // The bots' http node: answers after 20 ms (a turn that waits on the outside world), or
    // never while `hangHolds` is set (`/hold`).
    endpoint = await startLocalServer((_call, request) =>
      request.url === '/hold' && hangHolds ? new Promise<never>(() => undefined) : { status: 200, body: { ok: true }, delayMs: 20 },
    );
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
      RUN_LEASE_MS: String(RUN_LEASE_MS),
    };
    for (const name of ['gateway', 'invocation']) {
      const migration = runNode(compiledEntry(`services/${name}/main.js`), ['migrate'], environment);
      expect(await migration.exit()).toBe(0);
    }
    // The same environment for both replicas of each service: nothing tells them apart.
    for (const name of ['gateway', 'gateway', 'invocation', 'invocation']) {
      const port = await freePort();
      const started = runNode(compiledEntry(`services/${name}/main.js`), [], { ...environment, PORT: String(port) });
      processes.push(started);
      const url = `http://127.0.0.1:${port}`;
      await waitForOk(`${url}/health/ready`, started);
      if (name === 'gateway') gateways.push(new HttpClient(url));
      else invocations.push({ process: started, url });
    }
  }, 180_000);

  afterAll(async () => {
    await Promise.all(processes.map((started) => started.stop()));
    await endpoint?.close();
    await deletePrefixedStreams(testNatsUrl(), busPrefix);
    await database?.drop();
  });

  /** A chatbot whose bot counts the session's messages in a session variable, calling `path` between reading and writing it. */
  async function countingBot(path: string): Promise<{ project: ProjectFixture; token: string }> {
    const definition = chatbotDefinition(
      { start: 'n1', nodes: { n1: { type: 'end' } } },
      {
        start: 'count',
        nodes: {
          count: { type: 'set', values: { count: '$exists(vars.count) ? vars.count + 1 : 1' }, next: 'call' },
          call: { type: 'http', method: 'GET', url: `${endpoint.url}${path}`, next: 'say' },
          say: { type: 'message', text: '{{ vars.count }}', next: 'end' },
          end: { type: 'end' },
        },
      },
    );
    const project = await createPublishedProject(gateways[0]!, 'CHATBOT', definition);
    const { token } = await issueToken(gateways[0]!, project, ['bot:invoke']);
    await eventually('the published bot to reach the invocation service', async () => {
      const rows = await queryDatabase(database.url, 'SELECT published_version FROM invocation.project_copies WHERE project_id = $1', [project.projectId]);
      return rows[0]?.published_version === 1 ? true : undefined;
    });
    return { project, token };
  }

  const send = (gateway: HttpClient, project: ProjectFixture, token: string, sessionId: string) =>
    gateway.post<Json>(runPath('botMessage', project), { message: 'one more', sessionId }, { bearer: token });

  const countOf = (answer: { status: number; body: Json }): number => {
    if (answer.status !== 200) throw new Error(`bot message: ${answer.status} ${JSON.stringify(answer.body)}`);
    const messages = (answer.body.result as { messages: string[] }).messages;
    return Number(messages[0]);
  };

  /** Bot runs each invocation replica executed, from its own metrics. */
  async function botRunsPerReplica(): Promise<number[]> {
    return Promise.all(
      invocations.map(async ({ url }) => {
        const text = await (await fetch(`${url}/metrics`)).text();
        const line = text.split('\n').find((row) => row.startsWith('runline_invocation_run_attempt_duration_seconds_count{') && row.includes('target_type="BOT"') && row.includes('status="SUCCEEDED"'));
        return line ? Number(line.split(' ').at(-1)) : 0;
      }),
    );
  }

  it('runs 20 messages of one session sent at once through two gateways one at a time: counters 1..20, none lost', async () => {
    const [first, second] = gateways as [HttpClient, HttpClient];
    const { project, token } = await countingBot('/count');
    const sessionId = 'counting-session';

    const answers = await Promise.all(Array.from({ length: 20 }, (_, index) => send(index % 2 === 0 ? first : second, project, token, sessionId)));
    const counts = answers.map(countOf).sort((a, b) => a - b);
    // Each message saw the state the one before it left: every count once, none lost or doubled.
    expect(counts).toEqual(Array.from({ length: 20 }, (_, index) => index + 1));
    // The state after them is 20: the next message counts 21.
    expect(countOf(await send(second, project, token, sessionId))).toBe(21);
    // Both invocation replicas took turns in the conversation.
    const perReplica = await botRunsPerReplica();
    expect(perReplica.every((runs) => runs > 0)).toBe(true);
    expect(perReplica.reduce((sum, runs) => sum + runs, 0)).toBe(21);
  }, 60_000);

  it('a replica that dies mid-turn holds the session no longer than its turn lease: the next message sees the state before the lost turn', async () => {
    const [first, second] = gateways as [HttpClient, HttpClient];
    const { project, token } = await countingBot('/hold');
    const sessionId = 'crashing-session';
    expect(countOf(await send(first, project, token, sessionId))).toBe(1);

    // The second message's turn hangs in its http node; its replica is killed there.
    hangHolds = true;
    const calls = endpoint.calls.length;
    void send(first, project, token, sessionId).catch(() => undefined);
    await eventually('the second turn to wait in its http node', async () => (endpoint.calls.length > calls ? true : undefined));
    const [running] = await queryDatabase(
      database.url,
      `SELECT lease_owner FROM invocation.invocations WHERE project_id = $1 AND status = 'RUNNING'`,
      [project.projectId],
    );
    const pid = Number(String(running?.lease_owner).split(':')[1]);
    const victim = invocations.find(({ process: started }) => started.child.pid === pid);
    expect(victim).toBeDefined();
    victim!.process.child.kill('SIGKILL');
    await victim!.process.exit();
    hangHolds = false;

    // The surviving replica takes the session once the dead turn's lease has expired, from the
    // state the last finished turn left (count 1): the lost turn saved nothing.
    const startedAt = Date.now();
    expect(countOf(await send(second, project, token, sessionId))).toBe(2);
    expect(Date.now() - startedAt).toBeLessThan(RUN_LEASE_MS + 5000);
    expect(countOf(await send(first, project, token, sessionId))).toBe(3);
  }, 60_000);
});
