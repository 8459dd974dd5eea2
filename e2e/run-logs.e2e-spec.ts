import { gatewayService } from '@runline/gateway-service';
import { invocationService } from '@runline/invocation-service';
import { schedulerService } from '@runline/scheduler-service';
import { consoleJwt, HttpClient, startTestSystem, type TestSystem } from '@runline/testing';
import { createPublishedProject, issueToken, publishDefinition, VALID_AUTOMATION_DEFINITION, VALID_CHATBOT_DEFINITION, type ProjectFixture } from './gateway-fixtures.js';
import { chatbotDefinition, failingSetFlow, invocationPath, pollUntilFinal, runPath, startSlowServer, type Json, type SlowServer } from './support/runs-support.js';

/**
 * The console's logs and invocation health over HTTP (DESIGN.md section 5, README "Invocation
 * health: what each figure counts"), against runs made through the API: successes, failures, a
 * timeout, a cancelled and a scheduled run, sync and async, flows and an automation.
 */
type LogRow = {
  invocationId: string;
  projectId: string;
  status: string;
  mode: string;
  targetType: string;
  triggerSource: string;
  createdAt: string;
  startedAt: string | null;
  completedAt: string | null;
  durationMs: number | null;
  errorMessage: string | null;
  scheduledFor: string | null;
};
type LogsPage = { data: LogRow[]; nextCursor: string | null; error?: string };
type Metrics = {
  from: string;
  to: string;
  bucket: string;
  totals: Record<string, number>;
  medianDurationMs: number | null;
  p95DurationMs: number | null;
  callbacks: { delivered: number; failed: number };
  series: Array<{ start: string; triggered: number; succeeded: number; failed: number }>;
  recent: LogRow[];
  error?: string;
};

const LOG_FIELDS = ['invocationId', 'projectId', 'status', 'mode', 'targetType', 'triggerSource', 'createdAt', 'startedAt', 'completedAt', 'durationMs', 'errorMessage', 'scheduledFor'];
const SECRET = 'hunter2-logs-secret-value';
const RUN_TIMEOUT_MS = 1500;
const HOUR = 3_600_000;

/** PostgreSQL's percentile_cont: linear interpolation between the two nearest values. */
function percentile(values: number[], fraction: number): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const position = fraction * (sorted.length - 1);
  const below = Math.floor(position);
  const above = Math.min(sorted.length - 1, below + 1);
  return Math.round(sorted[below]! + (sorted[above]! - sorted[below]!) * (position - below));
}

describe('run logs and invocation health', () => {
  let system: TestSystem;
  let http: HttpClient;
  let slowServer: SlowServer;
  let flows: ProjectFixture;
  let failing: ProjectFixture;
  let automation: ProjectFixture;
  let slow: ProjectFixture;
  let other: ProjectFixture;
  let flowToken: string;
  let otherRunId: string;
  /** Every run of the organization, as GET shows it, by id. */
  const made = new Map<string, Json>();
  let customer = 0;

  const logsPath = (orgId: string) => `/v1/orgs/${orgId}/external-invocations/logs`;
  const metricsPath = (orgId: string) => `/v1/orgs/${orgId}/external-invocations/metrics`;
  const logs = (query = '', bearer = flows.ownerJwt, orgId = flows.orgId) => http.get<LogsPage>(`${logsPath(orgId)}${query}`, { bearer });
  const metrics = (query = '', bearer = flows.ownerJwt, orgId = flows.orgId) => http.get<Metrics>(`${metricsPath(orgId)}${query}`, { bearer });
  const allRows = async (): Promise<LogRow[]> => (await logs('?limit=200')).body.data;

  /** A project in `owner`'s organization, with `definition` published. */
  async function projectIn(owner: ProjectFixture, type: 'CHATBOT' | 'AUTOMATION', definition: object): Promise<ProjectFixture> {
    const created = await http.post<{ projectId: string }>(`/v1/orgs/${owner.orgId}/projects`, { name: `p-${type}`, type }, { bearer: owner.ownerJwt });
    const project = { orgId: owner.orgId, projectId: created.body.projectId, ownerJwt: owner.ownerJwt };
    await publishDefinition(http, project, definition);
    return project;
  }

  /** Starts a run and remembers it as GET shows it once final (or as accepted, for scheduled runs). */
  async function run(project: ProjectFixture, token: string, endpoint: Parameters<typeof runPath>[0], body: Json, headers: Record<string, string> = {}): Promise<string> {
    const answer = await http.post<Json>(runPath(endpoint, project), body, { bearer: token, headers });
    const id = String(answer.body.invocationId);
    if (!/^[0-9a-f-]{36}$/.test(id)) throw new Error(`run: ${answer.status} ${JSON.stringify(answer.body)}`);
    await remember(project.orgId, id, token, body.runAt === undefined);
    return id;
  }
  async function remember(orgId: string, id: string, token: string, untilFinal = true): Promise<void> {
    const read = untilFinal ? await pollUntilFinal(http, orgId, id, token, { timeoutMs: 15_000 }) : await http.get<Json>(invocationPath(orgId, id), { bearer: token });
    made.set(id, read.body);
  }
  const flowBody = (extra: Json = {}) => ({ event: 'order.created', customerId: `c-${++customer}`, orderId: String(customer), ...extra });

  beforeAll(async () => {
    system = await startTestSystem([gatewayService, invocationService, schedulerService], {
      environment: { ACCESS_CACHE_TTL_MS: '0', OUTBOUND_ALLOWED_CIDRS: '127.0.0.0/8', ASYNC_RUN_TIMEOUT_MS: String(RUN_TIMEOUT_MS) },
    });
    http = new HttpClient(system.url('gateway'));
    slowServer = await startSlowServer(4_000);
    flows = await createPublishedProject(http, 'CHATBOT');
    failing = await projectIn(flows, 'CHATBOT', chatbotDefinition(failingSetFlow()));
    automation = await projectIn(flows, 'AUTOMATION', VALID_AUTOMATION_DEFINITION);
    slow = await projectIn(flows, 'CHATBOT', {
      ...VALID_CHATBOT_DEFINITION,
      flow: { trigger: { externalEnabled: true }, start: 'n1', nodes: { n1: { type: 'http', method: 'GET', url: slowServer.url, saveAs: 'r', next: 'n2' }, n2: { type: 'end' } } },
    });
    other = await createPublishedProject(http, 'CHATBOT');

    flowToken = (await issueToken(http, flows, ['flow:trigger'])).token;
    const failingToken = (await issueToken(http, failing, ['flow:trigger'])).token;
    const automationToken = (await issueToken(http, automation, ['automation:trigger'])).token;
    const slowToken = (await issueToken(http, slow, ['flow:trigger'])).token;
    const otherToken = (await issueToken(http, other, ['flow:trigger'])).token;

    await run(flows, flowToken, 'flowTrigger', flowBody({ webhookSecret: SECRET }));
    await run(flows, flowToken, 'flowTrigger', flowBody());
    await run(flows, flowToken, 'flowTriggerAsync', flowBody(), { 'x-idempotency-key': 'logs-key-1' });
    await run(flows, flowToken, 'flowTriggerAsync', flowBody({ apiToken: SECRET }));
    const scheduled = await run(flows, flowToken, 'flowTriggerAsync', flowBody({ runAt: new Date(Date.now() + HOUR).toISOString() }));
    const cancelled = await run(flows, flowToken, 'flowTriggerAsync', flowBody({ runAt: new Date(Date.now() + HOUR).toISOString() }));
    expect((await http.patch(invocationPath(flows.orgId, cancelled), { action: 'cancel' }, { bearer: flowToken })).status).toBe(200);
    await remember(flows.orgId, cancelled, flowToken);
    await run(failing, failingToken, 'flowTrigger', flowBody());
    await run(failing, failingToken, 'flowTrigger', flowBody());
    await run(automation, automationToken, 'automationTrigger', { event: 'e', payload: { orderId: 'o-1', amount: 1 } });
    await run(slow, slowToken, 'flowTriggerAsync', flowBody());
    otherRunId = await run(other, otherToken, 'flowTrigger', flowBody());
    made.delete(otherRunId);
    expect(made.get(scheduled)?.status).toBe('SCHEDULED');
  }, 120_000);
  afterAll(async () => {
    await system?.stop();
    await slowServer?.close();
  });

  it('made the runs the figures below are checked against', () => {
    const statuses = [...made.values()].map((doc) => doc.status).sort();
    expect(statuses).toEqual(['CANCELLED', 'FAILED', 'FAILED', 'SCHEDULED', 'SUCCEEDED', 'SUCCEEDED', 'SUCCEEDED', 'SUCCEEDED', 'SUCCEEDED', 'TIMEOUT']);
  });

  describe('GET /external-invocations/logs', () => {
    it("lists the organization's runs newest first, each row the run's fields as GET shows them, nothing of another organization", async () => {
      const answer = await logs();
      expect(answer.status).toBe(200);
      expect(answer.body.nextCursor).toBeNull();
      const rows = answer.body.data;
      expect(rows.map((row) => row.invocationId).sort()).toEqual([...made.keys()].sort());
      const times = rows.map((row) => Date.parse(row.createdAt));
      expect([...times].sort((a, b) => b - a)).toEqual(times);
      for (const row of rows) {
        expect(Object.keys(row)).toEqual(LOG_FIELDS);
        const document = made.get(row.invocationId)!;
        const { projectId, ...fields } = row;
        expect(fields).toEqual(Object.fromEntries(LOG_FIELDS.filter((field) => field !== 'projectId').map((field) => [field, document[field]])));
        expect([flows.projectId, failing.projectId, automation.projectId, slow.projectId]).toContain(projectId);
      }
      expect(rows.find((row) => row.status === 'FAILED')?.errorMessage).toEqual(expect.any(String));
      expect(rows.find((row) => row.status === 'SCHEDULED')?.scheduledFor).toEqual(expect.any(String));
    });

    it('filters by each of projectId, status, targetType, mode and triggerSource: exactly the matching runs', async () => {
      const all = await allRows();
      const cases: Array<[string, string[]]> = [
        ['projectId', [flows.projectId, failing.projectId, automation.projectId, slow.projectId]],
        ['status', ['SCHEDULED', 'QUEUED', 'RUNNING', 'SUSPENDED', 'SUCCEEDED', 'FAILED', 'TIMEOUT', 'CANCELLED']],
        ['targetType', ['BOT', 'FLOW', 'AUTOMATION']],
        ['mode', ['SYNC', 'ASYNC']],
        ['triggerSource', ['WEBHOOK', 'SCHEDULE', 'POLLING', 'REPLAY']],
      ];
      let nonEmpty = 0;
      for (const [name, values] of cases) {
        for (const value of values) {
          const answer = await logs(`?${name}=${value}`);
          const expected = all.filter((row) => row[name as keyof LogRow] === value).map((row) => row.invocationId);
          expect({ name, value, status: answer.status, ids: answer.body.data.map((row) => row.invocationId) }).toEqual({ name, value, status: 200, ids: expected });
          if (expected.length > 0 && expected.length < all.length) nonEmpty += 1;
        }
      }
      // Each filter separated something (the runs cover several values of each).
      expect(nonEmpty).toBeGreaterThanOrEqual(12);
      const combined = await logs(`?projectId=${flows.projectId}&status=SUCCEEDED&mode=ASYNC`);
      expect(combined.body.data.map((row) => row.invocationId)).toEqual(
        all.filter((row) => row.projectId === flows.projectId && row.status === 'SUCCEEDED' && row.mode === 'ASYNC').map((row) => row.invocationId),
      );
      expect(combined.body.data).toHaveLength(2);
    });

    it('filters by from (inclusive) and to (exclusive) on createdAt', async () => {
      const all = await allRows();
      const middle = all[Math.floor(all.length / 2)]!;
      const from = await logs(`?from=${encodeURIComponent(middle.createdAt)}`);
      expect(from.body.data.map((row) => row.invocationId)).toEqual(all.filter((row) => row.createdAt >= middle.createdAt).map((row) => row.invocationId));
      const to = await logs(`?to=${encodeURIComponent(middle.createdAt)}`);
      expect(to.body.data.map((row) => row.invocationId)).toEqual(all.filter((row) => row.createdAt < middle.createdAt).map((row) => row.invocationId));
      expect(from.body.data.length + to.body.data.length).toBe(all.length);
      const future = await logs(`?from=${encodeURIComponent(new Date(Date.now() + HOUR).toISOString())}`);
      expect(future.body).toEqual({ data: [], nextCursor: null });
    });

    it('q finds a run by its invocationId or its idempotency key, only in the organization', async () => {
      const all = await allRows();
      const target = all[3]!;
      expect((await logs(`?q=${target.invocationId}`)).body.data).toEqual([target]);
      expect((await logs(`?q=${target.invocationId.toUpperCase()}`)).body.data).toEqual([target]);
      const keyed = (await logs('?q=logs-key-1')).body.data;
      expect(keyed).toHaveLength(1);
      expect(keyed[0]).toMatchObject({ projectId: flows.projectId, mode: 'ASYNC' });
      expect(made.has(keyed[0]!.invocationId)).toBe(true);
      expect((await logs('?q=no-such-key')).body).toEqual({ data: [], nextCursor: null });
      expect((await logs(`?q=${otherRunId}`)).body).toEqual({ data: [], nextCursor: null });
      // q combines with the other filters.
      expect((await logs(`?q=${target.invocationId}&status=${target.status === 'FAILED' ? 'SUCCEEDED' : 'FAILED'}`)).body.data).toEqual([]);
    });

    it('pages with a keyset cursor: no duplicates and no gaps while new runs arrive, nextCursor null on the last page', async () => {
      const before = await allRows();
      const seen: string[] = [];
      let cursor: string | null = null;
      let pages = 0;
      const arrived: string[] = [];
      do {
        const answer: { status: number; body: LogsPage } = await logs(`?limit=3${cursor ? `&cursor=${cursor}` : ''}`);
        expect(answer.status).toBe(200);
        seen.push(...answer.body.data.map((row) => row.invocationId));
        cursor = answer.body.nextCursor;
        pages += 1;
        // A run arrives between pages: it is newer than every page read so far.
        if (pages <= 2) arrived.push(await run(flows, flowToken, 'flowTrigger', flowBody()));
      } while (cursor !== null);
      expect(seen).toEqual(before.map((row) => row.invocationId));
      expect(pages).toBe(Math.ceil(before.length / 3));
      expect(new Set(seen).size).toBe(seen.length);
      const after = await allRows();
      expect(after.slice(0, 2).map((row) => row.invocationId)).toEqual([...arrived].reverse());
    }, 60_000);

    it('a page of exactly the remaining rows ends with nextCursor null; limit defaults to 50 and may be 1..200', async () => {
      const all = await allRows();
      const exact = await logs(`?limit=${all.length}`);
      expect(exact.body.nextCursor).toBeNull();
      expect(exact.body.data).toHaveLength(all.length);
      const short = await logs(`?limit=${all.length - 1}`);
      expect(short.body.nextCursor).toEqual(expect.any(String));
      const last = await logs(`?limit=${all.length - 1}&cursor=${short.body.nextCursor}`);
      expect(last.body).toEqual({ data: [all[all.length - 1]], nextCursor: null });
      expect((await logs('?limit=1')).body.data).toHaveLength(1);
      expect((await logs('?limit=200')).status).toBe(200);
      expect((await logs()).body.data).toHaveLength(Math.min(50, all.length));
    });

    it('400 with a message naming the parameter for each bad query value', async () => {
      const zoneless = '2025-01-01T00:00:00';
      const cursorOf = (text: string) => Buffer.from(text).toString('base64url');
      const cases: Array<[string, string]> = [
        ['?status=DONE', 'status must be one of: SCHEDULED, QUEUED, RUNNING, SUSPENDED, SUCCEEDED, FAILED, TIMEOUT, CANCELLED'],
        ['?status=succeeded', 'status must be one of: SCHEDULED, QUEUED, RUNNING, SUSPENDED, SUCCEEDED, FAILED, TIMEOUT, CANCELLED'],
        ['?status=FAILED&status=TIMEOUT', 'status must be given once'],
        ['?targetType=flow', 'targetType must be one of: BOT, FLOW, AUTOMATION'],
        ['?mode=LATER', 'mode must be one of: SYNC, ASYNC'],
        ['?triggerSource=CRON', 'triggerSource must be one of: WEBHOOK, SCHEDULE, POLLING, REPLAY'],
        ['?from=yesterday', 'from must be a valid ISO date-time'],
        [`?to=${zoneless}`, 'to must be a valid ISO date-time'],
        ['?from=2025-02-30T00:00:00Z', 'from must be a valid ISO date-time'],
        ['?from=2025-01-02T00:00:00Z&to=2025-01-01T00:00:00Z', 'from must be before to'],
        ['?from=2025-01-01T00:00:00Z&to=2025-01-01T00:00:00Z', 'from must be before to'],
        ['?limit=0', 'limit must be an integer from 1 to 200'],
        ['?limit=201', 'limit must be an integer from 1 to 200'],
        ['?limit=-1', 'limit must be an integer from 1 to 200'],
        ['?limit=ten', 'limit must be an integer from 1 to 200'],
        ['?limit=2.5', 'limit must be an integer from 1 to 200'],
        ['?cursor=not-a-cursor', 'cursor is malformed'],
        ['?cursor=%2B%2B%2B', 'cursor is malformed'],
        [`?cursor=${cursorOf('2025-01-01T00:00:00.000000Z|not-a-uuid')}`, 'cursor is malformed'],
        [`?cursor=${cursorOf(`2025-01-01T00:00:00Z|${flows.projectId}`)}`, 'cursor is malformed'],
        [`?q=${'k'.repeat(129)}`, 'q must be at most 128 characters'],
      ];
      for (const [query, message] of cases) {
        const answer = await logs(query);
        expect({ query, status: answer.status, body: answer.body }).toEqual({ query, status: 400, body: { error: message } });
      }
    });
  });

  describe('GET /external-invocations/metrics', () => {
    it('counts the runs created in the window by outcome, with duration percentiles of the finished runs', async () => {
      const answer = await metrics();
      expect(answer.status).toBe(200);
      const docs = [...made.values()];
      const count = (status: string) => docs.filter((doc) => doc.status === status).length;
      expect(answer.body.totals).toEqual({
        triggered: docs.length,
        succeeded: count('SUCCEEDED'),
        failed: count('FAILED'),
        timeout: count('TIMEOUT'),
        cancelled: count('CANCELLED'),
        inProgress: count('SCHEDULED') + count('QUEUED') + count('RUNNING') + count('SUSPENDED'),
        waiting: 0,
      });
      expect(answer.body.totals).toMatchObject({ failed: 2, timeout: 1, cancelled: 1, inProgress: 1 });
      const durations = docs.filter((doc) => ['SUCCEEDED', 'FAILED', 'TIMEOUT'].includes(String(doc.status)) && typeof doc.durationMs === 'number').map((doc) => doc.durationMs as number);
      expect(durations.length).toBe(docs.length - 2);
      expect(answer.body.medianDurationMs).toBe(percentile(durations, 0.5));
      expect(answer.body.p95DurationMs).toBe(percentile(durations, 0.95));
      // The timeout (at least 1.5 s) is the longest run, so p95 is well above the median.
      expect(answer.body.p95DurationMs).toBeGreaterThan(answer.body.medianDurationMs!);
      expect(answer.body.callbacks).toEqual({ delivered: 0, failed: 0 });
      const rows = await allRows();
      expect(answer.body.recent).toEqual(rows.slice(0, 10));
    });

    it('defaults to the last 24 hours in hour buckets; the series is UTC, zero-filled and sums to the totals', async () => {
      const before = Date.now();
      const answer = (await metrics()).body;
      const to = Date.parse(answer.to);
      expect(to).toBeGreaterThanOrEqual(before - 1000);
      expect(to - Date.parse(answer.from)).toBe(24 * HOUR);
      expect(answer.bucket).toBe('hour');
      expect(answer.series).toHaveLength(Math.floor((to - 1) / HOUR) - Math.floor(Date.parse(answer.from) / HOUR) + 1);
      expect(answer.series[0]!.start).toBe(new Date(Math.floor(Date.parse(answer.from) / HOUR) * HOUR).toISOString());
      for (const [index, bucket] of answer.series.entries()) {
        expect(Date.parse(bucket.start)).toBe(Date.parse(answer.series[0]!.start) + index * HOUR);
      }
      const sum = (field: 'triggered' | 'succeeded' | 'failed') => answer.series.reduce((total, bucket) => total + bucket[field], 0);
      expect({ triggered: sum('triggered'), succeeded: sum('succeeded'), failed: sum('failed') }).toEqual({
        triggered: answer.totals.triggered,
        succeeded: answer.totals.succeeded,
        failed: answer.totals.failed,
      });
      // Each run is in the bucket of its createdAt; every other bucket is zero.
      const docs = [...made.values()];
      for (const bucket of answer.series) {
        const start = Date.parse(bucket.start);
        const inside = docs.filter((doc) => Math.floor(Date.parse(String(doc.createdAt)) / HOUR) * HOUR === start);
        expect(bucket).toEqual({ start: bucket.start, triggered: inside.length, succeeded: inside.filter((doc) => doc.status === 'SUCCEEDED').length, failed: inside.filter((doc) => doc.status === 'FAILED').length });
      }
    });

    it('a given window and bucket: day buckets, a project alone, an empty window with zero figures', async () => {
      const now = Date.now();
      const from = new Date(now - 3 * 86_400_000).toISOString();
      const to = new Date(now + HOUR).toISOString();
      const days = (await metrics(`?from=${from}&to=${to}&bucket=day`)).body;
      expect(days.bucket).toBe('day');
      expect(days.series.length).toBeGreaterThanOrEqual(4);
      expect(days.series.every((bucket) => bucket.start.endsWith('T00:00:00.000Z'))).toBe(true);
      expect(days.totals.triggered).toBe(made.size);

      const project = (await metrics(`?projectId=${failing.projectId}`)).body;
      expect(project.totals).toEqual({ triggered: 2, succeeded: 0, failed: 2, timeout: 0, cancelled: 0, inProgress: 0, waiting: 0 });
      expect(project.recent.every((row) => row.projectId === failing.projectId)).toBe(true);

      const empty = (await metrics('?from=2020-01-01T00:00:00Z&to=2020-01-01T05:30:00Z')).body;
      expect(empty).toEqual({
        from: '2020-01-01T00:00:00.000Z',
        to: '2020-01-01T05:30:00.000Z',
        bucket: 'hour',
        totals: { triggered: 0, succeeded: 0, failed: 0, timeout: 0, cancelled: 0, inProgress: 0, waiting: 0 },
        waitingByReason: { concurrency: 0, throttle: 0, debounce: 0, project: 0 },
        medianDurationMs: null,
        p95DurationMs: null,
        callbacks: { delivered: 0, failed: 0 },
        series: [0, 1, 2, 3, 4, 5].map((hour) => ({ start: `2020-01-01T0${hour}:00:00.000Z`, triggered: 0, succeeded: 0, failed: 0 })),
        recent: [],
      });
      // Longer than 48 hours without a bucket: days.
      expect((await metrics('?from=2020-01-01T00:00:00Z&to=2020-01-04T00:00:00Z')).body.bucket).toBe('day');
    });

    it('400 with a message naming the parameter', async () => {
      const cases: Array<[string, string]> = [
        ['?bucket=week', 'bucket must be hour or day'],
        ['?from=soon', 'from must be a valid ISO date-time'],
        ['?to=2025-01-01', 'to must be a valid ISO date-time'],
        ['?from=2025-01-02T00:00:00Z&to=2025-01-01T00:00:00Z', 'from must be before to'],
        ['?from=2020-01-01T00:00:00Z&to=2020-03-01T00:00:00Z&bucket=hour', 'from and to span more than 1000 hour buckets; use bucket=day or a shorter window'],
        ['?from=2020-01-01T00:00:00Z&to=2023-01-01T00:00:00Z', 'from and to span more than 1000 day buckets; use a shorter window'],
      ];
      for (const [query, message] of cases) {
        const answer = await metrics(query);
        expect({ query, status: answer.status, body: answer.body }).toEqual({ query, status: 400, body: { error: message } });
      }
    });
  });

  describe('who may read them', () => {
    const routes = [
      ['logs', (orgId: string) => logsPath(orgId)],
      ['metrics', (orgId: string) => metricsPath(orgId)],
    ] as const;

    it.each(routes)('%s: an API token gets 403 Unauthorized (no data), not the token route of an invocation id', async (_name, path) => {
      for (const headers of [{ authorization: `Bearer ${flowToken}` }, { 'x-api-key': flowToken }] as Array<Record<string, string>>) {
        const answer = await http.get(path(flows.orgId), { headers });
        expect({ status: answer.status, body: answer.body }).toEqual({ status: 403, body: { error: 'Unauthorized' } });
      }
    });

    it.each(routes)('%s: no credential 401 Missing console token; a non-member 404; a bad or foreign projectId 404 Project not found', async (_name, path) => {
      expect(await http.get(path(flows.orgId))).toMatchObject({ status: 401, body: { error: 'Missing console token' } });
      expect(await http.get(path(flows.orgId), { bearer: consoleJwt('stranger') })).toMatchObject({ status: 404, body: { error: 'Organization not found' } });
      // A non-member learns nothing from a bad query either.
      expect(await http.get(`${path(flows.orgId)}?limit=0&bucket=x`, { bearer: consoleJwt('stranger') })).toMatchObject({ status: 404 });
      for (const projectId of [other.projectId, 'not-a-uuid', '00000000-0000-4000-8000-000000000000']) {
        expect(await http.get(`${path(flows.orgId)}?projectId=${projectId}`, { bearer: flows.ownerJwt })).toMatchObject({ status: 404, body: { error: 'Project not found' } });
      }
      // The other organization's owner sees only its own run.
      const theirs = await http.get<LogsPage & Metrics>(path(other.orgId), { bearer: other.ownerJwt });
      expect(theirs.status).toBe(200);
      const ids = (theirs.body.data ?? theirs.body.recent).map((row) => row.invocationId);
      expect(ids).toEqual([otherRunId]);
    });

    it('a VIEWER reads them; a deleted project is 404 Project not found', async () => {
      const viewer = `viewer-${process.pid}`;
      expect((await http.post(`/v1/orgs/${flows.orgId}/members`, { userId: viewer, role: 'VIEWER' }, { bearer: flows.ownerJwt })).status).toBe(201);
      expect((await logs('?limit=1', consoleJwt(viewer))).status).toBe(200);
      expect((await metrics('', consoleJwt(viewer))).status).toBe(200);
      const doomed = await projectIn(flows, 'CHATBOT', VALID_CHATBOT_DEFINITION);
      expect((await logs(`?projectId=${doomed.projectId}`)).status).toBe(200);
      expect((await http.delete(`/v1/orgs/${flows.orgId}/projects/${doomed.projectId}`, { bearer: flows.ownerJwt })).status).toBe(204);
      expect(await logs(`?projectId=${doomed.projectId}`)).toMatchObject({ status: 404, body: { error: 'Project not found' } });
      expect(await metrics(`?projectId=${doomed.projectId}`)).toMatchObject({ status: 404, body: { error: 'Project not found' } });
    });

    it('no secret of a payload appears in either answer', async () => {
      const answers = [await logs('?limit=200'), await metrics()];
      for (const answer of answers) {
        expect(answer.status).toBe(200);
        expect(JSON.stringify(answer.body)).not.toContain(SECRET);
        expect(JSON.stringify(answer.body)).not.toContain('requestPayload');
      }
    });
  });
});
