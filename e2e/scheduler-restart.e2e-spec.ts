import { gatewayService } from '@runline/gateway-service';
import { invocationService } from '@runline/invocation-service';
import { HttpClient, queryDatabase, startTestSystem, TEST_SECRETS_KEY, testNatsUrl, type TestSystem } from '@runline/testing';
import { createPublishedProject, issueToken, setRateLimit, type ProjectFixture } from './gateway-fixtures.js';
import { startLocalServer, type InvocationBody, type LocalServer } from './support/lifecycle-support.js';
import { compiledEntry, freePort, runNode, waitForOk, type RunningProcess } from './support/processes.js';
import { holdRowsAsTheyCome } from './support/row-locks.js';

/** An automation whose workflow calls the endpoint once with its run number. */
function countingAutomation(url: string): object {
  return {
    schemaVersion: 1,
    workflow: {
      trigger: { externalEnabled: true, key: 'external_event' },
      start: 'call',
      nodes: {
        call: { type: 'http', method: 'GET', url: `${url}/hit/{{ payload.n }}`, next: 'done' },
        done: { type: 'return', value: "{ 'ok': true }" },
      },
    },
  };
}

/**
 * The scheduler as it is deployed: its own process (the compiled build), beside the gateway
 * and the invocation service. Killed with -9 while jobs wait, and run as two replicas.
 */
describe('scheduler processes: restart and replicas', () => {
  let system: TestSystem;
  let http: HttpClient;
  let endpoint: LocalServer;
  let project: ProjectFixture;
  let token: string;
  const schedulers: RunningProcess[] = [];
  const sql = (query: string, parameters: unknown[] = []) => queryDatabase(system.database.url, query, parameters);

  const startScheduler = async (extra: NodeJS.ProcessEnv = {}): Promise<RunningProcess> => {
    const port = await freePort();
    const started = runNode(compiledEntry('services/scheduler/main.js'), [], {
      PATH: process.env.PATH,
      DATABASE_URL: system.database.url,
      NATS_URL: testNatsUrl(),
      BUS_PREFIX: system.busPrefix,
      HOST: '127.0.0.1',
      PORT: String(port),
      SECRETS_KEY: TEST_SECRETS_KEY,
      RUN_MIGRATIONS: 'true',
      LOG_LEVEL: 'error',
      ...extra,
    });
    schedulers.push(started);
    await waitForOk(`http://127.0.0.1:${port}/health/ready`, started);
    return started;
  };

  /** Schedules `count` runs numbered from `first`, each with the `when` of `schedule(n)` (runAt or delaySeconds). */
  const schedule = (first: number, count: number, when: (n: number) => { runAt: string } | { delaySeconds: number }) =>
    Promise.all(
      Array.from({ length: count }, async (_, i) => {
        const n = first + i;
        const answer = await http.post<InvocationBody>(
          `/v1/orgs/${project.orgId}/automations/${project.projectId}/trigger-async`,
          { payload: { n }, ...when(n) },
          { bearer: token },
        );
        expect(answer.status).toBe(202);
        expect(answer.body.status).toBe('SCHEDULED');
        return { n, id: answer.body.invocationId };
      }),
    );

  const hitsOf = (n: number) => endpoint.calls.filter((call) => call.path === `/hit/${n}`).length;

  const startedAt = async (ids: string[]) => {
    const rows = await sql(
      `SELECT id, document->>'status' AS status, document->>'startedAt' AS started FROM invocation.invocation_views WHERE id = ANY($1::uuid[])`,
      [ids],
    );
    return new Map(rows.map((row) => [row.id as string, { status: row.status as string, started: row.started as string | null }]));
  };

  const until = async (what: string, condition: () => Promise<boolean>, timeoutMs: number) => {
    const deadline = Date.now() + timeoutMs;
    while (!(await condition())) {
      if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };

  const expectEachStartedOnce = async (runs: Array<{ n: number; id: string }>) => {
    const doubled = await sql(
      `SELECT invocation_id FROM invocation.invocation_events WHERE type = 'InvocationStarted' AND invocation_id = ANY($1::uuid[])
        GROUP BY invocation_id HAVING count(*) > 1`,
      [runs.map((run) => run.id)],
    );
    expect(doubled).toEqual([]);
    for (const run of runs) expect(hitsOf(run.n)).toBe(1);
  };

  beforeAll(async () => {
    system = await startTestSystem([gatewayService, invocationService], { environment: { OUTBOUND_ALLOWED_CIDRS: '127.0.0.0/8', ACCESS_CACHE_TTL_MS: '0' } });
    http = new HttpClient(system.url('gateway'));
    endpoint = await startLocalServer(() => ({ status: 200, body: { ok: true } }));
    project = await createPublishedProject(http, 'AUTOMATION', countingAutomation(endpoint.url));
    // The tests schedule hundreds of runs with one token, above the default 120 per minute.
    await setRateLimit(http, project, 100_000);
    token = (await issueToken(http, project, ['automation:trigger'])).token;
  }, 60_000);

  afterAll(async () => {
    for (const scheduler of schedulers) await scheduler.stop();
    await system?.stop();
    await endpoint?.close();
  });

  it('jobs that came due while the scheduler was down fire at its start (its first pass, no sweep), each once', async () => {
    const first = await startScheduler();
    // Each job is held from the moment the scheduler stores it until the scheduler is dead (its
    // claim skips held rows), so it cannot fire one however slowly the requests or the kill come.
    // Due 8 s after each request arrives, 20 ms apart: the margin is only for one job's trip from
    // the request to its row, never a time already past.
    const holding = holdRowsAsTheyCome(system.database.url, `SELECT name FROM scheduler.scheduled_jobs WHERE status = 'SCHEDULED' FOR KEY SHARE`, 50, 30_000);
    holding.catch(() => undefined); // awaited below; a failure must not surface as unhandled first
    const runs = await schedule(0, 50, (n) => ({ delaySeconds: 8 + n * 0.02 }));
    const held = await holding;
    try {
      first.child.kill('SIGKILL');
      expect(await first.exit()).toBe('SIGKILL');
    } finally {
      await held.release();
    }

    // Everything comes due while no scheduler runs (a wait for the time, not for work).
    const [{ last }] = (await sql(`SELECT max(due_at) AS last FROM scheduler.scheduled_jobs`)) as Array<{ last: Date }>;
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, last.getTime() + 500 - Date.now())));
    const before = await startedAt(runs.map((run) => run.id));
    expect([...before.values()].every((run) => run.status === 'SCHEDULED')).toBe(true);

    // Its sweep only every 10 minutes: what fires now was fired by the pass at its start
    // (job-firer.ts: "the first pass runs at start"), whatever the machine's speed; how many ms that takes is not asserted,
    // the wait below only guards against hanging.
    const restartedAt = Date.now();
    await startScheduler({ SCHEDULER_SWEEP_INTERVAL_MS: '600000' });
    await until('every run to start', async () => [...(await startedAt(runs.map((run) => run.id))).values()].every((run) => run.started !== null), 20_000);
    const after = await startedAt(runs.map((run) => run.id));
    for (const run of after.values()) expect(Date.parse(run.started as string)).toBeGreaterThanOrEqual(restartedAt);
    await until('every call', async () => runs.every((run) => hitsOf(run.n) >= 1), 10_000);
    await expectEachStartedOnce(runs);
  }, 90_000);

  it('two scheduler replicas fire every job exactly once', async () => {
    // One replica runs from the test before; start a second one beside it.
    await startScheduler();
    // Due 2 s after each request arrives, 5 ms apart: relative to arrival, so a machine slow to
    // accept all 200 spreads them a little more but never sends a time already past.
    const runs = await schedule(1000, 200, (n) => ({ delaySeconds: 2 + (n - 1000) * 0.005 }));
    await until('every run to start', async () => [...(await startedAt(runs.map((run) => run.id))).values()].every((run) => run.started !== null), 15_000);
    await until('every call', async () => runs.every((run) => hitsOf(run.n) >= 1), 10_000);
    // One ScheduledJobFired per job, counted where the replicas wrote them (with each claim): no
    // second fire is on its way, so no run can start again later.
    const [emitted] = await sql(
      `SELECT count(*)::int AS events FROM scheduler.outbox AS outbox JOIN unnest($1::text[]) AS run(id) ON position(convert_to(run.id, 'UTF8') IN outbox.data) > 0
        WHERE outbox.subject LIKE '%scheduled-job-fired'`,
      [runs.map((run) => run.id)],
    );
    expect(Number(emitted?.events)).toBe(runs.length);
    await expectEachStartedOnce(runs);
    const [fired] = await sql(`SELECT count(*)::int AS fired FROM scheduler.scheduled_jobs WHERE status = 'FIRED' AND invocation_id = ANY($1::uuid[])`, [
      runs.map((run) => run.id),
    ]);
    expect(Number(fired?.fired)).toBe(runs.length);
  }, 60_000);
});
