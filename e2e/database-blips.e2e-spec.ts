import { gatewayService } from '@runline/gateway-service';
import { invocationService } from '@runline/invocation-service';
import { HttpClient, queryDatabase, startTestSystem, type TestSystem } from '@runline/testing';
import { createPublishedProject, issueToken, setRateLimit, VALID_AUTOMATION_DEFINITION } from './gateway-fixtures.js';
import { startCallbackProcess } from './support/callback-process.js';
import { selfSignedCertificate, startHttpsReceiver, type HttpsReceiver, type TestCertificate } from './support/https-receiver.js';
import { eventually } from './support/lifecycle-support.js';
import type { RunningProcess } from './support/processes.js';

const REQUESTS = 500;
const CUTS = 3;

/**
 * Every database connection of the services cut (pg_terminate_backend) several times during a
 * burst of async runs with callbacks: a client sees only 202 or 503, every 202 run succeeds and
 * executes once, every 503 resent with its key gives one run, every run calls back.
 */
describe('database connections cut under load', () => {
  let system: TestSystem;
  let certificate: TestCertificate;
  let receiver: HttpsReceiver;
  const processes: RunningProcess[] = [];
  const sql = (query: string, parameters: unknown[] = []) => queryDatabase(system.database.url, query, parameters);

  beforeAll(async () => {
    certificate = await selfSignedCertificate();
    receiver = await startHttpsReceiver(certificate);
    system = await startTestSystem([gatewayService, invocationService], { environment: { OUTBOUND_ALLOWED_CIDRS: '127.0.0.0/8', LOG_LEVEL: 'error' } });
    processes.push(await startCallbackProcess(system, certificate.caFile));
  }, 60_000);

  afterAll(async () => {
    for (const started of processes) await started.stop();
    await system?.stop();
    await receiver?.close();
    await certificate?.remove();
  });

  it(`${REQUESTS} async runs, ${CUTS} cuts: only 202 and 503, one run per key, each succeeds once and calls back`, async () => {
    const http = new HttpClient(system.url('gateway'));
    const project = await createPublishedProject(http, 'AUTOMATION', VALID_AUTOMATION_DEFINITION);
    const token = (await issueToken(http, project, ['automation:trigger'])).token;
    await setRateLimit(http, project, 100_000);
    const path = `/v1/orgs/${project.orgId}/automations/${project.projectId}/trigger-async`;
    const send = (index: number) =>
      http.post<{ invocationId?: string; error?: string }>(
        path,
        { payload: { orderId: `o-${index}`, amount: index }, webhookUrl: `${receiver.url}/blip`, webhookSecret: 'blip-secret' },
        { bearer: token, headers: { 'x-idempotency-key': `blip-${index}` } },
      );

    const statuses = new Map<number, number>();
    const runOf = new Map<number, string>();
    let next = 0;
    const load = Promise.all(
      Array.from({ length: 20 }, async () => {
        for (let index = next++; index < REQUESTS; index = next++) {
          const answer = await send(index);
          statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
          if (answer.status === 202) runOf.set(index, answer.body.invocationId!);
        }
      }),
    );
    let cuts = 0;
    const cutter = (async () => {
      while (cuts < CUTS) {
        await new Promise((resolve) => setTimeout(resolve, 250));
        const [{ n }] = (await sql(
          `SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()`,
        )) as Array<{ n: number }>;
        if (n > 0) cuts++;
      }
    })();
    await Promise.all([load, cutter]);

    // Only 202 (accepted) or 503 (retry with the same key), never 500.
    expect([...statuses.keys()].filter((status) => status !== 202 && status !== 503)).toEqual([]);
    // Every refused request, resent with its key, gives a run.
    for (let index = 0; index < REQUESTS; index++) {
      for (let attempt = 0; !runOf.has(index) && attempt < 50; attempt++) {
        const answer = await send(index);
        if (answer.status === 202 || answer.status === 200) runOf.set(index, answer.body.invocationId!);
        else await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
    expect(runOf.size).toBe(REQUESTS);
    const runIds = new Set(runOf.values());
    expect(runIds.size).toBe(REQUESTS);
    // One run per key in the store, whatever was retried.
    const [{ runs }] = (await sql(`SELECT count(*)::int AS runs FROM invocation.invocations WHERE project_id = $1`, [project.projectId])) as Array<{ runs: number }>;
    expect(runs).toBe(REQUESTS);

    const ended = await eventually(
      'every run to end',
      async () => {
        const rows = (await sql(`SELECT document->>'status' AS status, count(*)::int AS n FROM invocation.invocation_views WHERE project_id = $1 GROUP BY 1`, [
          project.projectId,
        ])) as Array<{ status: string; n: number }>;
        const open = rows.filter((row) => row.status !== 'SUCCEEDED' && row.status !== 'FAILED').reduce((sum, row) => sum + row.n, 0);
        return open === 0 ? Object.fromEntries(rows.map((row) => [row.status, row.n])) : undefined;
      },
      90_000,
    );
    expect(ended).toEqual({ SUCCEEDED: REQUESTS });
    // Each run executed once: one InvocationStarted and one InvocationSucceeded event.
    const executions = (await sql(
      `SELECT e.invocation_id, count(*) FILTER (WHERE e.type = 'InvocationStarted')::int AS started, count(*) FILTER (WHERE e.type = 'InvocationSucceeded')::int AS succeeded
         FROM invocation.invocation_events e JOIN invocation.invocations i ON i.id = e.invocation_id
        WHERE i.project_id = $1 GROUP BY 1`,
      [project.projectId],
    )) as Array<{ started: number; succeeded: number }>;
    expect(executions).toHaveLength(REQUESTS);
    expect(executions.filter((row) => row.started !== 1 || row.succeeded !== 1)).toEqual([]);
    // Every run called back at least once (the receiver counts by the body's invocation id).
    const calledBack = () => new Set(receiver.at('/blip').map((request) => (JSON.parse(request.raw.toString()) as { invocationId: string }).invocationId));
    await eventually(
      'a callback for every run',
      async () => {
        const called = calledBack();
        return [...runIds].every((id) => called.has(id)) ? true : undefined;
      },
      60_000,
    ).catch(async (error: unknown) => {
      // Say where the missing callbacks are: no delivery at all, or a delivery in which state.
      const missing = [...runIds].filter((id) => !calledBack().has(id));
      const deliveries = await sql(`SELECT invocation_id, status, attempts_made, next_attempt_at FROM callback.callback_deliveries WHERE invocation_id = ANY($1)`, [missing]);
      const outbox = await sql(`SELECT count(*)::int AS unpublished FROM invocation.outbox WHERE published_at IS NULL`);
      console.log(`runs without a callback: ${missing.length}; their deliveries: ${JSON.stringify(deliveries).slice(0, 2000)}; invocation outbox: ${JSON.stringify(outbox)}`);
      throw error;
    });
    console.log(`database cuts: ${cuts}; answers ${JSON.stringify(Object.fromEntries(statuses))}; runs ${runIds.size}; callbacks ${receiver.at('/blip').length}`);
  }, 240_000);
});
