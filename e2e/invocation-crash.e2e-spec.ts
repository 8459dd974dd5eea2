import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gatewayService } from '@runline/gateway-service';
import { HttpClient, queryDatabase, startTestSystem, TEST_SECRETS_KEY, testNatsUrl, type TestSystem } from '@runline/testing';
import { createProject, issueToken, publishDefinition, setRateLimit } from './gateway-fixtures.js';
import { compiledEntry, freePort, runNode, waitForOk, type RunningProcess } from './support/processes.js';

const RUNS = 200;
const CONCURRENCY = 8;
/** Calls answered before the kill; the rest wait for it (at most CONCURRENCY of them at once). */
const HELD_AFTER = 40;

/**
 * The invocation service is killed with SIGKILL while 200 accepted async runs are queued or
 * running, then started again. Every accepted run must reach a final status and none may run
 * twice: each run's http node calls a local server once per run, which counts the calls.
 */
describe('invocation service killed with -9 while async runs are in flight', () => {
  let system: TestSystem;
  let http: HttpClient;
  let receiver: Server;
  const hits = new Map<number, number>();
  let kill: () => void = () => undefined;
  const killed = new Promise<void>((resolve) => (kill = resolve));
  let invocation: RunningProcess | undefined;
  let environment: NodeJS.ProcessEnv;
  const sql = <T>(query: string, parameters: unknown[] = []) => queryDatabase(system.database.url, query, parameters) as Promise<T[]>;

  let invocationPort = 0;
  const startInvocation = async () => {
    const port = await freePort();
    const started = runNode(compiledEntry('services/invocation/main.js'), [], { ...environment, PORT: String(port) });
    await waitForOk(`http://127.0.0.1:${port}/health/ready`, started);
    invocationPort = port;
    return started;
  };
  /** The invocation service's gauge `name`, as it reports it now. */
  const gauge = async (name: string) => {
    const text = await (await fetch(`http://127.0.0.1:${invocationPort}/metrics`)).text();
    const value = new RegExp(`^${name}(?:\\{[^}]*\\})? (\\d+)$`, 'm').exec(text)?.[1];
    if (value === undefined) throw new Error(`no gauge ${name}`);
    return Number(value);
  };

  beforeAll(async () => {
    receiver = createServer((request, response) => {
      const n = Number(/\/hit\/(\d+)/.exec(request.url ?? '')?.[1]);
      hits.set(n, (hits.get(n) ?? 0) + 1);
      const answer = () => {
        if (!response.destroyed) response.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
      };
      // Slow enough that runs are caught in the middle when the process dies. Past the first
      // HELD_AFTER calls, answers wait for the kill: the slots stay taken, so runs are still
      // queued and mid-call when it comes, however slowly the test gets there.
      if (total(hits) > HELD_AFTER) void killed.then(answer);
      else setTimeout(answer, 100);
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    system = await startTestSystem([gatewayService]);
    http = new HttpClient(system.url('gateway'));
    environment = {
      PATH: process.env.PATH,
      DATABASE_URL: system.database.url,
      NATS_URL: testNatsUrl(),
      BUS_PREFIX: system.busPrefix,
      HOST: '127.0.0.1',
      SECRETS_KEY: TEST_SECRETS_KEY,
      RUN_MIGRATIONS: 'true',
      RUN_CONCURRENCY: String(CONCURRENCY),
      RUN_LEASE_MS: '1500',
      RUN_SWEEP_INTERVAL_MS: '200',
      BUS_ACK_WAIT_MS: '2000',
      OUTBOUND_ALLOWED_CIDRS: '127.0.0.0/8',
      LOG_LEVEL: 'error',
    };
    invocation = await startInvocation();
  }, 60_000);

  afterAll(async () => {
    kill();
    await invocation?.stop();
    await system?.stop();
    await new Promise((resolve) => receiver?.close(resolve));
  });

  it('brings every accepted run to a final status, and runs none twice', async () => {
    const project = await createProject(http, 'CHATBOT');
    const port = (receiver.address() as AddressInfo).port;
    await publishDefinition(http, project, {
      schemaVersion: 1,
      bot: { start: 'end', nodes: { end: { type: 'end' } } },
      flow: {
        start: 'call',
        nodes: {
          call: { type: 'http', method: 'GET', url: `http://127.0.0.1:${port}/hit/{{ payload.n }}`, next: 'done' },
          done: { type: 'end' },
        },
      },
    });
    const { token } = await issueToken(http, project, ['flow:trigger']);
    // RUNS requests at once with one token: more than the default rate limit allows.
    await setRateLimit(http, project, 100_000);
    const path = `/v1/orgs/${project.orgId}/flows/${project.projectId}/trigger-async`;

    // While most runs wait, what the process holds stays bounded: never more runs RUNNING
    // than its slots, never more start commands taken off the bus than slots + 8 (the rest
    // wait in the fair start queue in PostgreSQL, or on the bus, not in its memory).
    const held = { running: 0, executing: 0, commands: 0, waitingForSlot: 0, startQueue: 0, samples: 0 };
    let sample = true;
    const sampling = (async () => {
      while (sample) {
        const [{ running }] = await sql<{ running: string }>(`SELECT count(*) AS running FROM invocation.invocations WHERE status = 'RUNNING'`);
        held.running = Math.max(held.running, Number(running));
        held.executing = Math.max(held.executing, await gauge('runline_invocation_runs_executing'));
        held.commands = Math.max(held.commands, await gauge('runline_invocation_start_commands_in_progress'));
        held.waitingForSlot = Math.max(held.waitingForSlot, await gauge('runline_invocation_runs_waiting_for_slot'));
        held.startQueue = Math.max(held.startQueue, await gauge('runline_invocation_start_queue'));
        held.samples++;
      }
    })();

    const accepted = await Promise.all(
      Array.from({ length: RUNS }, (_, n) => http.post<{ invocationId: string; status: string }>(path, { event: 'e', customerId: `c-${n}`, n }, { bearer: token })),
    );
    expect(accepted.map((answer) => answer.status)).toEqual(Array(RUNS).fill(202));
    const ids = new Set(accepted.map((answer) => answer.body.invocationId));
    expect(ids.size).toBe(RUNS);

    // Kill once some runs are done and others are mid-flight or still queued.
    await until(() => total(hits) >= 20 && held.samples >= 5, 20_000);
    sample = false;
    await sampling;
    expect(held.running).toBeLessThanOrEqual(CONCURRENCY);
    expect(held.executing).toBeLessThanOrEqual(CONCURRENCY);
    expect(held.commands).toBeLessThanOrEqual(CONCURRENCY + 8);
    // Starts waiting for a slot are among those commands.
    expect(held.waitingForSlot).toBeLessThanOrEqual(CONCURRENCY + 8);
    // The bound was reached: runs did wait, beyond the slots (in the start queue, once a few wait for a slot here).
    expect(held.startQueue).toBeGreaterThan(0);
    invocation!.child.kill('SIGKILL');
    expect(await invocation!.exit()).toBe('SIGKILL');
    const doneAtKill = total(hits);
    kill();
    expect(doneAtKill).toBeLessThan(RUNS);

    invocation = await startInvocation();
    await until(async () => {
      const [{ open }] = await sql<{ open: string }>(`SELECT count(*) AS open FROM invocation.invocations WHERE status NOT IN ('SUCCEEDED', 'FAILED')`);
      return Number(open) === 0;
    }, 60_000);

    const rows = await sql<{ id: string; status: string; error: string | null }>(
      `SELECT id, document->>'status' AS status, document->>'errorMessage' AS error FROM invocation.invocation_views`,
    );
    expect(rows).toHaveLength(RUNS);
    expect(new Set(rows.map((row) => row.id))).toEqual(ids);
    const failed = rows.filter((row) => row.status === 'FAILED');
    // Only runs that were RUNNING when the process died can have been interrupted.
    expect(failed.length).toBeLessThanOrEqual(CONCURRENCY);
    for (const row of failed) expect(row.error).toMatch(/^Run was interrupted/);
    expect(rows.filter((row) => row.status === 'SUCCEEDED').length).toBe(RUNS - failed.length);

    // None ran twice: one call per run at most, and no run started twice.
    for (let n = 0; n < RUNS; n++) expect(hits.get(n) ?? 0).toBeLessThanOrEqual(1);
    const starts = await sql<{ invocation_id: string; starts: string }>(
      `SELECT invocation_id, count(*) AS starts FROM invocation.invocation_events WHERE type = 'InvocationStarted' GROUP BY invocation_id HAVING count(*) > 1`,
    );
    expect(starts).toEqual([]);
    // Every succeeded run made its call.
    expect(total(hits)).toBeGreaterThanOrEqual(RUNS - failed.length);
  }, 120_000);
});

function total(hits: Map<number, number>): number {
  let sum = 0;
  for (const count of hits.values()) sum += count;
  return sum;
}

async function until(condition: () => boolean | Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
