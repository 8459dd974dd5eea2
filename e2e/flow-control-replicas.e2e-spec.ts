import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gatewayService } from '@runline/gateway-service';
import { invocationService } from '@runline/invocation-service';
import { createLogger } from '@runline/observability';
import { startService, type RunningService } from '@runline/runtime';
import { HttpClient, queryDatabase, startTestSystem, type TestSystem } from '@runline/testing';
import { createProject, createPublishedProject, issueToken, type ProjectFixture } from './gateway-fixtures.js';
import { eventually } from './support/lifecycle-support.js';
import { runPath, type Json } from './support/runs-support.js';

/**
 * The receiver the runs call: POST /work/<key> answers after `holdMs`, counting the calls in
 * flight per key (their maximum is what a concurrency limit must bound) and when each came.
 */
class Receiver {
  readonly inFlight = new Map<string, number>();
  readonly maxInFlight = new Map<string, number>();
  readonly arrivals: Array<{ key: string; at: number }> = [];
  holdMs = 300;
  private server: Server | undefined;
  url = '';

  async start(): Promise<void> {
    this.server = createServer((request, response) => {
      request.resume();
      const key = decodeURIComponent((request.url ?? '').split('/').pop() ?? '');
      this.arrivals.push({ key, at: Date.now() });
      const now = (this.inFlight.get(key) ?? 0) + 1;
      this.inFlight.set(key, now);
      this.maxInFlight.set(key, Math.max(now, this.maxInFlight.get(key) ?? 0));
      setTimeout(() => {
        this.inFlight.set(key, (this.inFlight.get(key) ?? 1) - 1);
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end('{}');
      }, this.holdMs);
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server?.close(() => resolve()) ?? resolve());
  }
}

/**
 * Flow control across two invocation replicas (DESIGN sections 13 and 15): runs of one
 * automation, accepted through the gateway and spread by NATS over both replicas, respect the
 * trigger's per-key concurrency and throttle exactly, as counted by the receiver they call.
 */
describe('flow control across two invocation replicas', () => {
  let system: TestSystem;
  let http: HttpClient;
  let secondInvocation: RunningService;
  const receiver = new Receiver();
  const sql = (query: string, parameters: unknown[] = []) => queryDatabase(system.database.url, query, parameters);

  beforeAll(async () => {
    await receiver.start();
    system = await startTestSystem([gatewayService, invocationService], {
      // A sync run may wait (and run) 2.5 s: the sync timeout case below ends in seconds.
      environment: { OUTBOUND_ALLOWED_CIDRS: '127.0.0.0/8', ACCESS_CACHE_TTL_MS: '0', SYNC_RUN_TIMEOUT_MS: '2500' },
    });
    secondInvocation = await startService(invocationService, {
      databaseUrl: system.database.url,
      bus: system.bus,
      httpPort: 0,
      environment: system.environment,
      logger: createLogger({ service: 'invocation-2', level: process.env.TEST_LOG_LEVEL ?? 'silent' }),
    });
    http = new HttpClient(system.url('gateway'));
  }, 60_000);

  afterAll(async () => {
    await secondInvocation?.stop();
    await system?.stop();
    await receiver.close();
  });

  async function automation(flowControl: Json | undefined): Promise<{ project: ProjectFixture; token: string }> {
    const definition = {
      schemaVersion: 1,
      workflow: {
        trigger: { enrollmentPolicy: 'EVERY_MATCH', ...(flowControl === undefined ? {} : { flowControl }) },
        start: 'call',
        nodes: {
          call: { type: 'http', method: 'POST', url: `${receiver.url}/work/{{ payload.customerId }}`, next: 'done' },
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
    return { project, token };
  }

  async function startAsync(project: ProjectFixture, token: string, customerId: string): Promise<string> {
    const accepted = await http.post<Json>(runPath('automationTriggerAsync', project), { payload: { customerId } }, { bearer: token });
    if (accepted.status !== 202) throw new Error(`trigger-async: ${accepted.status} ${JSON.stringify(accepted.body)}`);
    return accepted.body.invocationId as string;
  }

  async function everyRunEnded(ids: string[], timeoutMs = 30_000): Promise<Array<{ status: string; trace: Json | null; errorMessage: string | null; steps: Json[] }>> {
    return eventually(
      'every run to end',
      async () => {
        const rows = await sql(`SELECT document FROM invocation.invocation_views WHERE id = ANY($1::uuid[])`, [ids]);
        const documents = rows.map((row) => row.document as { invocationId: string; status: string; trace: Json | null; errorMessage: string | null; steps: Json[] });
        documents.sort((a, b) => ids.indexOf(a.invocationId) - ids.indexOf(b.invocationId));
        return documents.length === ids.length && documents.every((document) => ['SUCCEEDED', 'FAILED', 'TIMEOUT', 'CANCELLED'].includes(document.status)) ? documents : undefined;
      },
      timeoutMs,
    );
  }

  it('never runs more than the concurrency limit of a key at once, across both replicas, and every run ends SUCCEEDED', async () => {
    const { project, token } = await automation({ concurrency: [{ limit: 2, key: 'payload.customerId' }] });
    const ids = await Promise.all(Array.from({ length: 16 }, (_, index) => startAsync(project, token, index % 2 === 0 ? 'conc-a' : 'conc-b')));

    // While runs wait, a waiting one shows what for.
    const waiting = await eventually('a run waiting for its slot', async () => {
      const rows = await sql(`SELECT document->'trace'->'flowControl' AS flow FROM invocation.invocation_views WHERE id = ANY($1::uuid[]) AND document->>'status' = 'QUEUED' AND document->'trace' ? 'flowControl'`, [ids]);
      return rows[0]?.flow as Json | undefined;
    });
    expect(waiting).toMatchObject({ waitingFor: 'concurrency' });
    expect(['conc-a', 'conc-b']).toContain(waiting.key);
    expect(Number.isNaN(Date.parse(waiting.since as string))).toBe(false);
    // The project's health counts the waiting runs by what they wait for.
    const health = await eventually('the health figures to count runs waiting for concurrency', async () => {
      const answer = await http.get<Json>(`/v1/orgs/${project.orgId}/external-invocations/metrics?projectId=${project.projectId}`, { bearer: project.ownerJwt });
      const byReason = answer.body.waitingByReason as Record<string, number> | undefined;
      return answer.status === 200 && byReason !== undefined && byReason.concurrency! > 0 ? answer.body : undefined;
    });
    expect(health.waitingByReason).toEqual({ concurrency: expect.any(Number), throttle: 0, debounce: 0, project: 0 });
    expect((health.totals as Json).waiting).toBe((health.waitingByReason as Record<string, number>).concurrency);

    const documents = await everyRunEnded(ids);
    expect(documents.map((document) => document.status)).toEqual(ids.map(() => 'SUCCEEDED'));
    expect(receiver.maxInFlight.get('conc-a')).toBe(2);
    expect(receiver.maxInFlight.get('conc-b')).toBe(2);
    // Started runs keep how long they waited and for what.
    const waited = documents.map((document) => (document.trace as { flowControl?: { waitedMs: number; reasons: string[] } }).flowControl);
    expect(waited.every((flow) => flow !== undefined && typeof flow.waitedMs === 'number')).toBe(true);
    expect(waited.some((flow) => flow!.reasons.includes('concurrency') && flow!.waitedMs > 0)).toBe(true);
    expect(await sql('SELECT * FROM invocation.flow_waits')).toEqual([]);
  }, 60_000);

  it('never starts more than limit + burst runs of a throttled key in any period, across both replicas', async () => {
    const { project, token } = await automation({ throttle: { limit: 2, periodSeconds: 1, burst: 1, key: 'payload.customerId' } });
    receiver.holdMs = 10;
    const ids = await Promise.all(Array.from({ length: 9 }, () => startAsync(project, token, 'thr-a')));
    const documents = await everyRunEnded(ids);

    expect(documents.map((document) => document.status)).toEqual(ids.map(() => 'SUCCEEDED'));
    const starts = documents.map((document) => Date.parse((document as unknown as { startedAt: string }).startedAt)).sort((a, b) => a - b);
    for (const at of starts) expect(starts.filter((other) => other >= at && other < at + 1000).length).toBeLessThanOrEqual(3);
    // 2 at once (1 + burst), then one every 500 ms: the ninth starts 3.5 s after the first.
    expect(starts.at(-1)! - starts[0]!).toBeGreaterThanOrEqual(3000);
    receiver.holdMs = 300;
  }, 60_000);

  it('spaces the runs a throttle of 10 a second with burst 0 holds back by 100 ms at least, across both replicas', async () => {
    const { project, token } = await automation({ throttle: { limit: 10, periodSeconds: 1, burst: 0, key: 'payload.customerId' } });
    receiver.holdMs = 10;
    const ids = await Promise.all(Array.from({ length: 16 }, () => startAsync(project, token, 'thr-pace')));
    const documents = await everyRunEnded(ids);

    const starts = documents.map((document) => Date.parse((document as unknown as { startedAt: string }).startedAt)).sort((a, b) => a - b);
    expect(starts.slice(1).map((at, index) => at - starts[index]!).filter((gap) => gap < 99)).toEqual([]);
    receiver.holdMs = 300;
  }, 60_000);

  const startSync = (project: ProjectFixture, token: string, customerId: string) =>
    http.post<Json>(runPath('automationTrigger', project), { payload: { customerId } }, { bearer: token });

  it('lets sync runs wait for their slot within their deadline: three at once with a limit of 1 run one after another, all 200', async () => {
    const { project, token } = await automation({ concurrency: [{ limit: 1, key: 'payload.customerId' }] });
    receiver.holdMs = 300;

    const answers = await Promise.all([0, 1, 2].map(() => startSync(project, token, 'sync-a')));

    expect(answers.map((answer) => [answer.status, answer.body.status])).toEqual([0, 1, 2].map(() => [200, 'SUCCEEDED']));
    expect(receiver.maxInFlight.get('sync-a')).toBe(1);
  }, 60_000);

  it('ends a sync run that could not start within its deadline TIMEOUT: 500 with its invocationId, never run', async () => {
    const { project, token } = await automation({ concurrency: [{ limit: 1, key: 'payload.customerId' }] });
    receiver.holdMs = 4000;
    // An async run holds the key's only slot for 4 s, longer than a sync request may wait.
    const holder = await startAsync(project, token, 'sync-b');
    await eventually('the async run to hold the slot', async () => (receiver.inFlight.get('sync-b') === 1 ? true : undefined));

    const second = await startSync(project, token, 'sync-b');

    expect(second.status).toBe(500);
    expect(second.body).toMatchObject({ status: 'TIMEOUT' });
    const [row] = await sql(`SELECT document FROM invocation.invocation_views WHERE id = $1`, [second.body.invocationId]);
    expect(row?.document).toMatchObject({ status: 'TIMEOUT', errorMessage: 'Run timed out waiting for flow control', steps: [] });
    await everyRunEnded([holder]);
    expect(receiver.arrivals.filter((arrival) => arrival.key === 'sync-b')).toHaveLength(1);
    receiver.holdMs = 300;
  }, 60_000);

  it('runs only the last run of a debounced burst, with its own payload; the earlier ones end CANCELLED, superseded by it', async () => {
    const { project, token } = await automation({ debounce: { periodSeconds: 1, key: 'payload.group' } });
    receiver.holdMs = 10;
    const startGrouped = async (customerId: string) => {
      const accepted = await http.post<Json>(runPath('automationTriggerAsync', project), { payload: { customerId, group: 'g1' } }, { bearer: token });
      return accepted.body.invocationId as string;
    };
    const ids: string[] = [];
    for (const customerId of ['deb-1', 'deb-2', 'deb-3', 'deb-4']) {
      ids.push(await startGrouped(customerId));
      await new Promise((resolve) => setTimeout(resolve, 200));
    }

    const documents = await everyRunEnded(ids);
    const last = ids.at(-1)!;
    expect(documents.map((document) => document.status)).toEqual(['CANCELLED', 'CANCELLED', 'CANCELLED', 'SUCCEEDED']);
    for (const document of documents.slice(0, 3)) expect(document).toMatchObject({ errorMessage: `Debounced: superseded by ${last}`, steps: [] });
    // The last run ran with its own payload, and only it called out.
    expect(receiver.arrivals.filter((arrival) => arrival.key.startsWith('deb-')).map((arrival) => arrival.key)).toEqual(['deb-4']);
    expect((documents[3]!.trace as { flowControl: { reasons: string[]; waitedMs: number } }).flowControl).toMatchObject({ reasons: ['debounce'] });
    expect((documents[3]!.trace as { flowControl: { waitedMs: number } }).flowControl.waitedMs).toBeGreaterThanOrEqual(900);
    receiver.holdMs = 300;
  }, 60_000);

  describe("the project's maxConcurrentRuns", () => {
    const settingsPath = (project: ProjectFixture) => `/v1/orgs/${project.orgId}/projects/${project.projectId}/api-settings`;

    it('refuses a limit below 1 (400) and shows the one set, null by default', async () => {
      const { project } = await automation(undefined);
      expect((await http.get<Json>(settingsPath(project), { bearer: project.ownerJwt })).body).toMatchObject({ maxConcurrentRuns: null });

      const refused = await http.patch<Json>(settingsPath(project), { maxConcurrentRuns: 0 }, { bearer: project.ownerJwt });
      expect(refused.status).toBe(400);
      expect(refused.body.error).toBe('maxConcurrentRuns must not be less than 1');

      const changed = await http.patch<Json>(settingsPath(project), { maxConcurrentRuns: 3 }, { bearer: project.ownerJwt });
      expect([changed.status, changed.body.maxConcurrentRuns]).toEqual([200, 3]);
    });

    it('never runs more than maxConcurrentRuns of the project at once, whatever their keys, once set (the next start obeys it)', async () => {
      const { project, token } = await automation(undefined);
      expect((await http.patch(settingsPath(project), { maxConcurrentRuns: 1 }, { bearer: project.ownerJwt })).status).toBe(200);
      receiver.holdMs = 200;

      const ids = await Promise.all(['mcr-a', 'mcr-b', 'mcr-c', 'mcr-d', 'mcr-e', 'mcr-f'].map((customerId) => startAsync(project, token, customerId)));
      const documents = await everyRunEnded(ids);

      expect(documents.map((document) => document.status)).toEqual(ids.map(() => 'SUCCEEDED'));
      const calls = receiver.arrivals.filter((arrival) => arrival.key.startsWith('mcr-')).map((arrival) => arrival.at).sort((a, b) => a - b);
      expect(calls).toHaveLength(6);
      // One at a time: each call came at least the receiver's hold after the one before it.
      for (let index = 1; index < calls.length; index++) expect(calls[index]! - calls[index - 1]!).toBeGreaterThanOrEqual(190);
      expect(documents.some((document) => (document.trace as { flowControl?: { reasons: string[] } }).flowControl?.reasons.includes('project'))).toBe(true);
      receiver.holdMs = 300;
    }, 60_000);
  });

  it("gives a slot back when its run's replica dies (its lease expires and the sweeper ends the run): the next run starts, never two RUNNING", async () => {
    const { project, token } = await automation({ concurrency: [{ limit: 1, key: 'payload.customerId' }] });
    receiver.holdMs = 5000;
    const first = await startAsync(project, token, 'kill-a');
    await eventually('the first run to hold the slot', async () => (receiver.inFlight.get('kill-a') === 1 ? true : undefined));
    receiver.holdMs = 50;
    const second = await startAsync(project, token, 'kill-a');
    await eventually('the second run to wait', async () => ((await sql('SELECT 1 FROM invocation.flow_waits WHERE invocation_id = $1', [second])).length === 1 ? true : undefined));

    // What a kill -9 leaves: a RUNNING run whose owner renews its lease no more (the live executor
    // of this test no longer owns it, so it cannot write its end either).
    await sql(`UPDATE invocation.invocations SET lease_owner = 'killed-replica', lease_expires_at = now() - interval '1 second' WHERE id = $1`, [first]);
    let mostRunning = 0;
    const sampling = setInterval(() => {
      void sql(`SELECT count(*)::int AS n FROM invocation.invocations WHERE project_id = $1 AND status = 'RUNNING'`, [project.projectId]).then(([row]) => {
        mostRunning = Math.max(mostRunning, Number(row?.n));
      });
    }, 20);
    try {
      const documents = await everyRunEnded([first, second], 20_000);
      expect(documents.map((document) => document.status)).toEqual(['FAILED', 'SUCCEEDED']);
    } finally {
      clearInterval(sampling);
    }
    expect(mostRunning).toBe(1);
    receiver.holdMs = 300;
  }, 60_000);

  it('refuses to save invalid flowControl: 400 with the message naming the trigger', async () => {
    const project = await createProject(http, 'AUTOMATION');
    const base = `/v1/orgs/${project.orgId}/projects/${project.projectId}`;
    const definition = { schemaVersion: 1, workflow: { trigger: { flowControl: { concurrency: [{ limit: 0 }] } }, start: 'n1', nodes: { n1: { type: 'end' } } } };

    const saved = await http.put<Json>(`${base}/definition`, { definition }, { bearer: project.ownerJwt });

    expect(saved.status).toBe(400);
    expect(saved.body.error).toBe('Invalid definition: workflow.trigger: flowControl.concurrency[0].limit must be between 1 and 100000 (got 0)');
  });
});
