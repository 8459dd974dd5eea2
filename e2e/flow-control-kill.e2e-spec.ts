import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gatewayService } from '@runline/gateway-service';
import { HttpClient, queryDatabase, startTestSystem, TEST_SECRETS_KEY, testNatsUrl, type TestSystem } from '@runline/testing';
import { createPublishedProject, issueToken } from './gateway-fixtures.js';
import { eventually } from './support/lifecycle-support.js';
import { compiledEntry, freePort, runNode, waitForOk, type RunningProcess } from './support/processes.js';
import { runPath, type Json } from './support/runs-support.js';

const LIMIT = 2;
const KEYS = ['kill-a', 'kill-b'];
const RUNS_PER_KEY = 15;

/**
 * The receiver the runs call: POST /work/<key>/<n> answers after `holdMs`. A call is in flight
 * from its arrival until it is answered or its connection closes (the caller was killed); the
 * maximum in flight per key is what the concurrency limit must bound.
 */
class Receiver {
  readonly inFlight = new Map<string, number>();
  readonly maxInFlight = new Map<string, number>();
  readonly callsPerRun = new Map<string, number>();
  private server: Server | undefined;
  url = '';

  async start(holdMs: number): Promise<void> {
    this.server = createServer((request, response) => {
      request.resume();
      const [key = '', n = ''] = (request.url ?? '').split('/').slice(-2).map(decodeURIComponent);
      this.callsPerRun.set(n, (this.callsPerRun.get(n) ?? 0) + 1);
      const now = (this.inFlight.get(key) ?? 0) + 1;
      this.inFlight.set(key, now);
      this.maxInFlight.set(key, Math.max(now, this.maxInFlight.get(key) ?? 0));
      let done = false;
      const end = () => {
        if (done) return;
        done = true;
        this.inFlight.set(key, (this.inFlight.get(key) ?? 1) - 1);
      };
      response.once('close', end);
      setTimeout(() => {
        if (response.destroyed) return;
        response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
        end();
      }, holdMs);
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  close(): Promise<void> {
    this.server?.closeAllConnections();
    return new Promise((resolve) => this.server?.close(() => resolve()) ?? resolve());
  }
}

/**
 * A per-key concurrency limit across two compiled invocation replicas (DESIGN sections 13 and
 * 15), one of them killed with SIGKILL while it runs: the receiver never sees more than the
 * limit of one key in flight, and every accepted run still ends (the killed replica's RUNNING
 * runs FAILED once their lease expired, every other run SUCCEEDED), none twice. Each replica
 * has two run slots, so runs may also wait in the fair start queue; it is empty at the end.
 */
describe('flow control with two compiled invocation replicas, one killed with -9', () => {
  let system: TestSystem;
  let http: HttpClient;
  const receiver = new Receiver();
  const replicas: RunningProcess[] = [];
  let environment: NodeJS.ProcessEnv;
  const sql = (query: string, parameters: unknown[] = []) => queryDatabase(system.database.url, query, parameters);

  const startReplica = async () => {
    const port = await freePort();
    const started = runNode(compiledEntry('services/invocation/main.js'), [], { ...environment, PORT: String(port) });
    replicas.push(started);
    await waitForOk(`http://127.0.0.1:${port}/health/ready`, started);
    return started;
  };

  beforeAll(async () => {
    await receiver.start(300);
    system = await startTestSystem([gatewayService], { environment: { ACCESS_CACHE_TTL_MS: '0' } });
    http = new HttpClient(system.url('gateway'));
    environment = {
      PATH: process.env.PATH,
      DATABASE_URL: system.database.url,
      NATS_URL: testNatsUrl(),
      BUS_PREFIX: system.busPrefix,
      HOST: '127.0.0.1',
      SECRETS_KEY: TEST_SECRETS_KEY,
      RUN_MIGRATIONS: 'true',
      RUN_CONCURRENCY: '2',
      RUN_LEASE_MS: '1500',
      RUN_SWEEP_INTERVAL_MS: '200',
      BUS_ACK_WAIT_MS: '2000',
      OUTBOUND_ALLOWED_CIDRS: '127.0.0.0/8',
      LOG_LEVEL: 'error',
    };
    // One after the other: the first applies the migrations.
    await startReplica();
    await startReplica();
  }, 90_000);

  afterAll(async () => {
    await Promise.all(replicas.map((replica) => replica.stop()));
    await system?.stop();
    await receiver.close();
  });

  it('never lets more than the limit of one key run at once, and loses no run', async () => {
    const definition = {
      schemaVersion: 1,
      workflow: {
        trigger: { enrollmentPolicy: 'EVERY_MATCH', flowControl: { concurrency: [{ limit: LIMIT, key: 'payload.customerId' }] } },
        start: 'call',
        nodes: {
          call: { type: 'http', method: 'POST', url: `${receiver.url}/work/{{ payload.customerId }}/{{ payload.n }}`, next: 'done' },
          done: { type: 'return', value: "{ 'ok': true }" },
        },
      },
    };
    const project = await createPublishedProject(http, 'AUTOMATION', definition);
    const { token } = await issueToken(http, project, ['automation:trigger']);
    await eventually('the published definition to reach the invocation service', async () => {
      const rows = await sql('SELECT published_version FROM invocation.project_copies WHERE project_id = $1', [project.projectId]);
      return rows[0]?.published_version === 1 ? true : undefined;
    });

    const accepted = await Promise.all(
      Array.from({ length: KEYS.length * RUNS_PER_KEY }, (_, n) =>
        http.post<Json>(runPath('automationTriggerAsync', project), { payload: { customerId: KEYS[n % KEYS.length], n: String(n) } }, { bearer: token }),
      ),
    );
    expect(accepted.map((answer) => answer.status)).toEqual(accepted.map(() => 202));
    const ids = accepted.map((answer) => answer.body.invocationId as string);

    // Kill, with SIGKILL, a replica while it runs runs of the project and others wait.
    const victim = await eventually('a replica running runs while others wait', async () => {
      const rows = await sql(
        `SELECT split_part(lease_owner, ':', 2)::int AS pid FROM invocation.invocations
          WHERE project_id = $1 AND status = 'RUNNING' AND lease_owner IS NOT NULL
            AND (SELECT count(*) FROM invocation.invocations WHERE project_id = $1 AND status = 'QUEUED') > 4`,
        [project.projectId],
      );
      const pids = new Set(rows.map((row) => row.pid as number));
      return replicas.find((replica) => pids.has(replica.child.pid!));
    }, 30_000);
    victim.child.kill('SIGKILL');
    expect(await victim.exit()).toBe('SIGKILL');

    const documents = await eventually(
      'every run to end',
      async () => {
        const rows = await sql(`SELECT document->>'status' AS status, document->>'errorMessage' AS error FROM invocation.invocation_views WHERE id = ANY($1::uuid[])`, [ids]);
        return rows.length === ids.length && rows.every((row) => !['QUEUED', 'RUNNING'].includes(row.status as string)) ? rows : undefined;
      },
      90_000,
    );

    for (const key of KEYS) expect(receiver.maxInFlight.get(key)).toBeLessThanOrEqual(LIMIT);
    // The limit was reached: runs of a key did run side by side.
    expect(Math.max(...KEYS.map((key) => receiver.maxInFlight.get(key) ?? 0))).toBe(LIMIT);
    const failed = documents.filter((document) => document.status !== 'SUCCEEDED');
    // Only the killed replica's RUNNING runs (at most its two slots) were interrupted.
    expect(failed.length).toBeLessThanOrEqual(2);
    for (const document of failed) expect(document).toMatchObject({ status: 'FAILED', error: expect.stringMatching(/^Run was interrupted/) });
    // None ran twice, and no run was started twice.
    expect([...receiver.callsPerRun.values()].every((calls) => calls === 1)).toBe(true);
    const startedTwice = await sql(
      `SELECT invocation_id FROM invocation.invocation_events WHERE type = 'InvocationStarted' AND invocation_id = ANY($1::uuid[]) GROUP BY invocation_id HAVING count(*) > 1`,
      [ids],
    );
    expect(startedTwice).toEqual([]);
    // Nothing is left waiting.
    expect(await sql('SELECT invocation_id FROM invocation.flow_waits')).toEqual([]);
    expect(await sql('SELECT invocation_id FROM invocation.start_queue')).toEqual([]);
  }, 150_000);
});
