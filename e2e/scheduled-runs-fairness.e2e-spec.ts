import { gatewayService } from '@runline/gateway-service';
import { invocationService } from '@runline/invocation-service';
import { schedulerService } from '@runline/scheduler-service';
import { HttpClient, queryDatabase, startTestSystem, type TestSystem } from '@runline/testing';
import { createPublishedProject, issueToken, type ProjectFixture } from './gateway-fixtures.js';
import { eventually, startLocalServer, type InvocationBody, type LocalServer } from './support/lifecycle-support.js';
import { waitingAutomation } from './support/automations.js';

const RUN_CONCURRENCY = 2;
/** Project A's runs, all due at one moment. */
const A_RUNS = 30;
/** How long the customer endpoint takes to answer: each run holds its slot at least this long. */
const HOLD_MS = 1200;
/** Project B's run is due this long after A's: before any of A's runs can have ended (HOLD_MS). */
const B_AFTER_MS = 300;
/**
 * The most of A's runs that may start before B's. B's run is due before any run slot frees, and
 * by then at most these of A's are started or waiting in the process: RUN_CONCURRENCY + 4 fired
 * starts held by the handler (ScheduledJobFiredHandler: beyond that, fired jobs go to the fair
 * queue) and RUN_CONCURRENCY + 4 taken from the queue (FairStarts.TAKEN_AHEAD) when the slots
 * were free at A's due time. B's queued start is tagged in the round under way, so of the runs
 * still queued at most one of A's (the one with B's tag, queued earlier) goes before it.
 * Without the fair order for fired jobs, every one of A's 30 fired jobs is ahead of B's in the
 * process's first-in-first-out wait for a slot (the scheduler fires A's 300 ms before B's): B's
 * run starts last, whatever the machine's speed.
 */
const MOST_A_RUNS_BEFORE_B = 2 * (RUN_CONCURRENCY + 4) + 1;

/** An automation that calls the customer endpoint with its order id, then returns. */
function callingAutomation(url: string): object {
  return {
    schemaVersion: 1,
    workflow: {
      trigger: { externalEnabled: true, key: 'external_event' },
      start: 'call',
      nodes: {
        call: { type: 'http', method: 'POST', url: `${url}/orders`, body: "{ 'orderId': payload.orderId }", next: 'done' },
        done: { type: 'return', value: "{ 'ok': true }" },
      },
    },
  };
}

/**
 * Fired scheduler jobs take the fair start order between projects (DESIGN section 13): with two
 * run slots held by slow runs, project A's 30 scheduled runs due at one moment do not all start
 * before project B's run due just after them. The gateway, the invocation service and the
 * scheduler on real NATS and PostgreSQL, driven over HTTP like a client.
 */
describe('scheduled runs in the fair start order', () => {
  let system: TestSystem;
  let http: HttpClient;
  let endpoint: LocalServer;
  const sql = (query: string, parameters: unknown[] = []) => queryDatabase(system.database.url, query, parameters);

  beforeAll(async () => {
    system = await startTestSystem([gatewayService, invocationService, schedulerService], {
      environment: { OUTBOUND_ALLOWED_CIDRS: '127.0.0.0/8', ACCESS_CACHE_TTL_MS: '0', RUN_CONCURRENCY: String(RUN_CONCURRENCY) },
    });
    http = new HttpClient(system.url('gateway'));
    endpoint = await startLocalServer(() => ({ status: 200, body: { ok: true }, delayMs: HOLD_MS }));
  });
  afterAll(async () => {
    await system?.stop();
    await endpoint?.close();
  });

  async function automation(definition: object = callingAutomation(endpoint.url)) {
    const project = await createPublishedProject(http, 'AUTOMATION', definition);
    const { token } = await issueToken(http, project, ['automation:trigger']);
    return { project, token };
  }
  const trigger = (project: ProjectFixture, token: string, orderId: string) =>
    http.post<InvocationBody>(`/v1/orgs/${project.orgId}/automations/${project.projectId}/trigger-async`, { payload: { orderId } }, { bearer: token });
  const statusesOf = async (ids: string[]) =>
    (await sql(`SELECT document->>'status' AS status FROM invocation.invocation_views WHERE id = ANY($1::uuid[])`, [ids])).map((row) => row.status as string);
  const schedule = (project: ProjectFixture, token: string, orderId: string, runAt: Date) =>
    http.post<InvocationBody>(`/v1/orgs/${project.orgId}/automations/${project.projectId}/trigger-async`, { payload: { orderId }, runAt: runAt.toISOString() }, { bearer: token });

  it("starts B's scheduled run before most of A's runs due a moment earlier, each at or after its time", async () => {
    const a = await automation();
    const b = await automation();
    const dueA = new Date(Date.now() + 6000);
    const dueB = new Date(dueA.getTime() + B_AFTER_MS);

    const accepted = await Promise.all([
      ...Array.from({ length: A_RUNS }, (_, n) => schedule(a.project, a.token, `a-${n}`, dueA)),
      schedule(b.project, b.token, 'b', dueB),
    ]);
    expect(accepted.map((answer) => [answer.status, answer.body.status])).toEqual(accepted.map(() => [202, 'SCHEDULED']));
    const ids = accepted.map((answer) => answer.body.invocationId);
    const idOfB = ids[A_RUNS]!;

    const runs = await eventually(
      'every run to end',
      async () => {
        const rows = await sql(
          `SELECT id, document->>'status' AS status, document->>'startedAt' AS "startedAt", document->>'scheduledFor' AS "scheduledFor"
             FROM invocation.invocation_views WHERE id = ANY($1::uuid[])`,
          [ids],
        );
        return rows.length === ids.length && rows.every((row) => row.status === 'SUCCEEDED') ? rows : undefined;
      },
      90_000,
    );

    for (const run of runs) expect(Date.parse(run.startedAt as string)).toBeGreaterThanOrEqual(Date.parse(run.scheduledFor as string));
    const startedB = Date.parse(runs.find((run) => run.id === idOfB)!.startedAt as string);
    const aRunsBeforeB = runs.filter((run) => run.id !== idOfB && Date.parse(run.startedAt as string) < startedB).length;
    expect(aRunsBeforeB).toBeLessThanOrEqual(MOST_A_RUNS_BEFORE_B);
    // Each ran once.
    expect(endpoint.calls).toHaveLength(A_RUNS + 1);
    const startedTwice = await sql(
      `SELECT invocation_id FROM invocation.invocation_events WHERE type = 'InvocationStarted' AND invocation_id = ANY($1::uuid[]) GROUP BY invocation_id HAVING count(*) > 1`,
      [ids],
    );
    expect(startedTwice).toEqual([]);
    await eventually('the fair start queue to be empty', async () => ((await sql('SELECT invocation_id FROM invocation.start_queue')).length === 0 ? true : undefined));
  }, 150_000);

  it('forgets a queued start whose job no longer applies, and starts nothing', async () => {
    const { project, token } = await automation();
    const accepted = await schedule(project, token, 'done-1', new Date(Date.now() + 1500));
    expect(accepted.status).toBe(202);
    const id = accepted.body.invocationId;
    await eventually('the run to end', async () => {
      const [row] = await sql(`SELECT document->>'status' AS status FROM invocation.invocation_views WHERE id = $1`, [id]);
      return row?.status === 'SUCCEEDED' ? true : undefined;
    });

    // A start of the job the run waited for, as a replica that died before forgetting it left it.
    await sql(`INSERT INTO invocation.start_queue (invocation_id, project_id, tag, expected_status, waiting_job, due_at) VALUES ($1, $2, 0, 'SCHEDULED', $3, now())`, [
      id,
      project.projectId,
      `run-${id}`,
    ]);
    await eventually('the stale start to be forgotten', async () => ((await sql('SELECT invocation_id FROM invocation.start_queue WHERE invocation_id = $1', [id])).length === 0 ? true : undefined));

    const starts = await sql(`SELECT count(*)::int AS n FROM invocation.invocation_events WHERE type = 'InvocationStarted' AND invocation_id = $1`, [id]);
    expect(starts).toEqual([{ n: 1 }]);
    expect(endpoint.calls.filter((call) => call.body.includes('"done-1"'))).toHaveLength(1);
  }, 30_000);

  it("resumes runs whose Wait ended through the fair queue while the run slots are taken, each with its job", async () => {
    const waiting = await automation(waitingAutomation(3));
    const slow = await automation();
    const waitingIds = (await Promise.all(Array.from({ length: 6 }, (_, n) => trigger(waiting.project, waiting.token, `w-${n}`)))).map((answer) => answer.body.invocationId);
    await eventually('the waiting runs to be SUSPENDED', async () => ((await statusesOf(waitingIds)).filter((status) => status === 'SUSPENDED').length === 6 ? true : undefined));
    // Six slow runs keep both slots taken for three rounds of HOLD_MS, well past the Waits' end.
    const slowIds = (await Promise.all(Array.from({ length: 6 }, (_, n) => trigger(slow.project, slow.token, `slow-${n}`)))).map((answer) => answer.body.invocationId);

    await eventually('a resume to wait in the fair start queue', async () =>
      (await sql(`SELECT waiting_job FROM invocation.start_queue WHERE expected_status = 'SUSPENDED' AND invocation_id = ANY($1::uuid[])`, [waitingIds])).length > 0 ? true : undefined,
    );

    await eventually('every run to end', async () => ((await statusesOf([...waitingIds, ...slowIds])).filter((status) => status === 'SUCCEEDED').length === 12 ? true : undefined), 60_000);
    const resumes = await sql(`SELECT count(*)::int AS n FROM invocation.invocation_events WHERE type = 'InvocationResumed' AND invocation_id = ANY($1::uuid[])`, [waitingIds]);
    expect(resumes).toEqual([{ n: 6 }]);
    await eventually('the fair start queue to be empty', async () => ((await sql('SELECT invocation_id FROM invocation.start_queue')).length === 0 ? true : undefined));
  }, 90_000);
});
