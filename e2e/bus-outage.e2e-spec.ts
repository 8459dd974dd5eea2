import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { gatewayService } from '@runline/gateway-service';
import { invocationService } from '@runline/invocation-service';
import { HttpClient, queryDatabase, startTestSystem, type TestSystem } from '@runline/testing';
import { createPublishedProject, issueToken, setRateLimit, VALID_AUTOMATION_DEFINITION } from './gateway-fixtures.js';
import { eventually } from './support/lifecycle-support.js';
import { freePort } from './support/processes.js';

const REQUESTS = 500;
const OUTAGE_MS = 20_000;

/**
 * nats-server killed for 20 s during a burst of async runs, then started again on its store.
 * The test runs its own nats-server (the shared one serves other tests): no accepted run ends
 * without running, requests made while the bus is down get 503 within a second, and every 503
 * resent with its key gives one run.
 */
describe('NATS killed and restarted under load', () => {
  let system: TestSystem;
  let storeDir: string;
  let port: number;
  let nats: ChildProcess | undefined;
  const previousUrl = process.env.TEST_NATS_URL;

  const startNats = async () => {
    nats = spawn('/usr/sbin/nats-server', ['-a', '127.0.0.1', '-p', String(port), '-js', '-sd', storeDir], { stdio: 'ignore' });
    await eventually('nats-server to listen', async () => {
      try {
        await fetch(`http://127.0.0.1:${port}`).catch((error: { cause?: { code?: string } }) => {
          if (error.cause?.code === 'ECONNREFUSED') throw error;
        });
        return true;
      } catch {
        return undefined;
      }
    });
  };
  const killNats = async () => {
    const running = nats!;
    const exited = new Promise((resolve) => running.once('exit', resolve));
    running.kill('SIGKILL');
    await exited;
  };

  beforeAll(async () => {
    storeDir = await mkdtemp(path.join(tmpdir(), 'runline-nats-'));
    port = await freePort();
    await startNats();
    process.env.TEST_NATS_URL = `nats://127.0.0.1:${port}`;
    system = await startTestSystem([gatewayService, invocationService], { environment: { LOG_LEVEL: 'error' } });
  }, 60_000);

  afterAll(async () => {
    await system?.stop();
    if (nats && nats.exitCode === null) await killNats();
    if (previousUrl === undefined) delete process.env.TEST_NATS_URL;
    else process.env.TEST_NATS_URL = previousUrl;
    await rm(storeDir, { recursive: true, force: true });
  });

  it(`${REQUESTS} async runs across a ${OUTAGE_MS / 1000} s outage: 503 fast while down, every run once`, async () => {
    const http = new HttpClient(system.url('gateway'));
    const project = await createPublishedProject(http, 'AUTOMATION', VALID_AUTOMATION_DEFINITION);
    const token = (await issueToken(http, project, ['automation:trigger'])).token;
    await setRateLimit(http, project, 100_000);
    const path = `/v1/orgs/${project.orgId}/automations/${project.projectId}/trigger-async`;
    const send = (index: number) =>
      http.post<{ invocationId?: string }>(path, { payload: { orderId: `o-${index}`, amount: index } }, { bearer: token, headers: { 'x-idempotency-key': `outage-${index}` } });

    const runOf = new Map<number, string>();
    const statuses = new Map<number, number>();
    let down = false;
    let slowWhileDown = 0;
    let next = 0;
    // Spread over the outage: about 20 requests a second from 5 clients.
    const load = Promise.all(
      Array.from({ length: 5 }, async () => {
        for (let index = next++; index < REQUESTS; index = next++) {
          const sentWhileDown = down;
          const started = performance.now();
          const answer = await send(index);
          if (sentWhileDown && answer.status === 503 && performance.now() - started > 1000) slowWhileDown++;
          statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
          if (answer.status === 202) runOf.set(index, answer.body.invocationId!);
          await new Promise((resolve) => setTimeout(resolve, 200));
        }
      }),
    );
    const outage = (async () => {
      await new Promise((resolve) => setTimeout(resolve, 3000));
      await killNats();
      down = true;
      await new Promise((resolve) => setTimeout(resolve, OUTAGE_MS));
      await startNats();
      down = false;
    })();
    await Promise.all([load, outage]);

    expect([...statuses.keys()].filter((status) => status !== 202 && status !== 503)).toEqual([]);
    expect(statuses.get(503) ?? 0).toBeGreaterThan(0);
    expect(slowWhileDown).toBe(0);
    for (let index = 0; index < REQUESTS; index++) {
      for (let attempt = 0; !runOf.has(index) && attempt < 100; attempt++) {
        const answer = await send(index);
        if (answer.status === 202 || answer.status === 200) runOf.set(index, answer.body.invocationId!);
        else await new Promise((resolve) => setTimeout(resolve, 200));
      }
    }
    expect(new Set(runOf.values()).size).toBe(REQUESTS);

    const ended = await eventually(
      'every run to end',
      async () => {
        const rows = (await queryDatabase(
          system.database.url,
          `SELECT document->>'status' AS status, count(*)::int AS n FROM invocation.invocation_views WHERE project_id = $1 GROUP BY 1`,
          [project.projectId],
        )) as Array<{ status: string; n: number }>;
        const open = rows.filter((row) => row.status !== 'SUCCEEDED' && row.status !== 'FAILED').reduce((sum, row) => sum + row.n, 0);
        return open === 0 ? Object.fromEntries(rows.map((row) => [row.status, row.n])) : undefined;
      },
      90_000,
    );
    expect(ended).toEqual({ SUCCEEDED: REQUESTS });
    const executions = (await queryDatabase(
      system.database.url,
      `SELECT count(*) FILTER (WHERE e.type = 'InvocationStarted')::int AS started
         FROM invocation.invocation_events e JOIN invocation.invocations i ON i.id = e.invocation_id
        WHERE i.project_id = $1 GROUP BY e.invocation_id`,
      [project.projectId],
    )) as Array<{ started: number }>;
    expect(executions).toHaveLength(REQUESTS);
    expect(executions.filter((row) => row.started !== 1)).toEqual([]);
    console.log(`bus outage: answers ${JSON.stringify(Object.fromEntries(statuses))}; runs ${REQUESTS}, each started once`);
  }, 240_000);
});
