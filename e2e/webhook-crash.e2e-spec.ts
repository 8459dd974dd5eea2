import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { HttpClient, queryDatabase, startTestSystem, TEST_CONSOLE_JWT_SECRET, TEST_SECRETS_KEY, testNatsUrl, type TestSystem } from '@runline/testing';
import { createProject, publishDefinition } from './gateway-fixtures.js';
import { createHook, deliver, type CreatedHook } from './support/hook-deliveries.js';
import { compiledEntry, freePort, runNode, waitForOk, type RunningProcess } from './support/processes.js';

const DELIVERIES = 500;
const CONCURRENCY = 8;
/** Calls answered before the kill; the rest wait for it (at most CONCURRENCY of them at once). */
const HELD_AFTER = 2 * CONCURRENCY;
const CRASHING = ['gateway', 'webhook', 'invocation'] as const;
type Crashing = (typeof CRASHING)[number];

/**
 * An accepted delivery is never lost: 500 signed deliveries in one burst, then the gateway (the
 * process that answered 202), the webhook service and the invocation service are killed with
 * SIGKILL right after the last 202, before most runs have even started, and started again.
 * Every accepted delivery must have exactly one run, which reaches its end and never starts
 * twice (each run's http node calls a local server once, which counts the calls); a retry of
 * every delivery after the restart finds that run (409) instead of starting another.
 */
describe('gateway, webhook and invocation killed with -9 right after answering 202 to a burst of deliveries', () => {
  let system: TestSystem;
  let receiver: Server;
  const hits = new Map<number, number>();
  let kill: () => void = () => undefined;
  const killed = new Promise<void>((resolve) => (kill = resolve));
  const running = new Map<Crashing, { process: RunningProcess; url: string }>();
  let environment: NodeJS.ProcessEnv;
  const sql = <T>(query: string, parameters: unknown[] = []) => queryDatabase(system.database.url, query, parameters) as Promise<T[]>;

  const start = async (name: Crashing) => {
    const port = await freePort();
    const started = runNode(compiledEntry(`services/${name}/main.js`), [], { ...environment, PORT: String(port) });
    const url = `http://127.0.0.1:${port}`;
    await waitForOk(`${url}/health/ready`, started);
    running.set(name, { process: started, url });
  };

  beforeAll(async () => {
    receiver = createServer((request, response) => {
      const n = Number(/\/hit\/(\d+)/.exec(request.url ?? '')?.[1]);
      hits.set(n, (hits.get(n) ?? 0) + 1);
      const answer = () => {
        if (!response.destroyed) response.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
      };
      // Slow enough that most runs are still queued when the processes die. Past the first
      // HELD_AFTER calls, answers wait for the kill: however long the burst takes on this
      // machine, the runs cannot all be done before it.
      if (total(hits) > HELD_AFTER) void killed.then(answer);
      else setTimeout(answer, 100);
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    system = await startTestSystem([]);
    environment = {
      PATH: process.env.PATH,
      DATABASE_URL: system.database.url,
      NATS_URL: testNatsUrl(),
      BUS_PREFIX: system.busPrefix,
      HOST: '127.0.0.1',
      CONSOLE_JWT_SECRET: TEST_CONSOLE_JWT_SECRET,
      SECRETS_KEY: TEST_SECRETS_KEY,
      RUN_MIGRATIONS: 'true',
      RUN_CONCURRENCY: String(CONCURRENCY),
      RUN_LEASE_MS: '1500',
      RUN_SWEEP_INTERVAL_MS: '200',
      BUS_ACK_WAIT_MS: '2000',
      OUTBOUND_ALLOWED_CIDRS: '127.0.0.0/8',
      LOG_LEVEL: 'error',
    };
    // One after another: each migrates its own schema at start.
    for (const name of CRASHING) await start(name);
  }, 120_000);

  afterAll(async () => {
    kill();
    await Promise.all([...running.values()].map(({ process }) => process.stop()));
    await system?.stop();
    await new Promise((resolve) => receiver?.close(resolve));
  });

  it('runs every accepted delivery exactly once after the restart', async () => {
    let http = new HttpClient(running.get('gateway')!.url);
    const project = await createProject(http, 'CHATBOT');
    const port = (receiver.address() as AddressInfo).port;
    await publishDefinition(http, project, {
      schemaVersion: 1,
      bot: { start: 'end', nodes: { end: { type: 'end' } } },
      flow: {
        trigger: { externalEnabled: true, key: 'external_event' },
        start: 'call',
        nodes: {
          call: { type: 'http', method: 'GET', url: `http://127.0.0.1:${port}/hit/{{ payload.n }}`, next: 'done' },
          done: { type: 'end' },
        },
      },
    });
    await http.patch(`/v1/orgs/${project.orgId}/projects/${project.projectId}/api-settings`, { defaultEnrollmentPolicy: 'EVERY_MATCH' }, { bearer: project.ownerJwt });
    const hook: CreatedHook = await createHook(http, project, { name: 'burst', rateLimitPerMinute: 100_000 });
    const body = (n: number) => ({ event: 'order.created', customerId: `c-${n}`, n });

    const answers = await Promise.all(Array.from({ length: DELIVERIES }, (_, n) => deliver(http, hook.id, hook.secret, body(n), { deliveryId: `burst-${n}` })));
    // Right after the last 202: nothing of the three may have had a chance to finish its work.
    for (const name of CRASHING) running.get(name)!.process.child.kill('SIGKILL');
    for (const name of CRASHING) expect(await running.get(name)!.process.exit()).toBe('SIGKILL');
    const doneAtKill = total(hits);
    kill();

    expect(answers.map((answer) => answer.status)).toEqual(Array(DELIVERIES).fill(202));
    const accepted = new Map(answers.map((answer, n) => [n, answer.body.invocationId!]));
    expect(new Set(accepted.values()).size).toBe(DELIVERIES);
    // The kill came before most runs had done their call: the rest waited in PostgreSQL.
    expect(doneAtKill).toBeLessThan(DELIVERIES);

    for (const name of CRASHING) await start(name);
    http = new HttpClient(running.get('gateway')!.url);
    await until(async () => {
      const [{ open }] = await sql<{ open: string }>(`SELECT count(*) AS open FROM invocation.invocations WHERE project_id = $1 AND status NOT IN ('SUCCEEDED', 'FAILED')`, [project.projectId]);
      return Number(open) === 0;
    }, 90_000);

    // Exactly one run per accepted delivery: no run lost, none added.
    const rows = await sql<{ id: string; status: string; error: string | null; source: string }>(
      `SELECT id, document->>'status' AS status, document->>'errorMessage' AS error, document->>'triggerSource' AS source
         FROM invocation.invocation_views WHERE project_id = $1`,
      [project.projectId],
    );
    expect(rows).toHaveLength(DELIVERIES);
    expect(new Set(rows.map((row) => row.id))).toEqual(new Set(accepted.values()));
    expect(rows.every((row) => row.source === 'WEBHOOK')).toBe(true);
    // Only a run that was mid-call when its process died can end interrupted (it is not run again).
    const failed = rows.filter((row) => row.status === 'FAILED');
    expect(failed.length).toBeLessThanOrEqual(CONCURRENCY);
    for (const row of failed) expect(row.error).toMatch(/^Run was interrupted/);
    expect(rows.filter((row) => row.status === 'SUCCEEDED')).toHaveLength(DELIVERIES - failed.length);

    // None started twice, none called out twice, and every succeeded run made its call.
    const twice = await sql(`SELECT invocation_id FROM invocation.invocation_events WHERE type = 'InvocationStarted' GROUP BY invocation_id HAVING count(*) > 1`);
    expect(twice).toEqual([]);
    for (let n = 0; n < DELIVERIES; n++) expect(hits.get(n) ?? 0).toBeLessThanOrEqual(1);
    expect(total(hits)).toBeGreaterThanOrEqual(DELIVERIES - failed.length);

    // The sender retries every delivery (it may not have seen the 202): each finds its run.
    const retries = await Promise.all(Array.from({ length: DELIVERIES }, (_, n) => deliver(http, hook.id, hook.secret, body(n), { deliveryId: `burst-${n}` })));
    expect(retries.map((answer) => [answer.status, answer.body.invocationId])).toEqual(Array.from({ length: DELIVERIES }, (_, n) => [409, accepted.get(n)]));
    const [{ runs }] = await sql<{ runs: number }>(`SELECT count(*)::int AS runs FROM invocation.invocation_views WHERE project_id = $1`, [project.projectId]);
    expect(runs).toBe(DELIVERIES);
  }, 240_000);
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
