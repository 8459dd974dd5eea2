import { deadLetterService } from '@runline/dead-letter-service';
import { gatewayService } from '@runline/gateway-service';
import { invocationService } from '@runline/invocation-service';
import { createLogger } from '@runline/observability';
import { pollingService } from '@runline/polling-service';
import { startService, type RunningService } from '@runline/runtime';
import { HttpClient, queryDatabase, startTestSystem, type TestSystem } from '@runline/testing';
import { createPublishedProject, issueToken, type ProjectFixture } from './gateway-fixtures.js';
import { eventually } from './support/lifecycle-support.js';
import { PollingEndpoint, reportingChatbot } from './support/polling-endpoint.js';

type Trigger = Record<string, unknown> & { pollKey: string; lastSeenValue: string | null };
type DeadLetter = Record<string, unknown> & { id: string; source: string; failureReason: string; requestPayload: Record<string, unknown> };

const item = (id: number | string, extra: Record<string, unknown> = {}) => ({ id, event: 'order.created', customerId: `c-${id}`, ...extra });

/** Polling triggers through the HTTP API, polls of a real local endpoint, and two polling replicas. */
describe('polling triggers', () => {
  let system: TestSystem;
  let http: HttpClient;
  let endpoint: PollingEndpoint;
  let project: ProjectFixture;
  let token: string;
  let secondReplica: RunningService | undefined;

  const base = () => `/v1/orgs/${project.orgId}/flows/${project.projectId}`;
  const register = (body: Record<string, unknown>) => http.post<{ data: Trigger; error?: string }>(`${base()}/polling`, body, { bearer: token });
  const list = async (pollKey?: string) => (await http.get<{ data: Trigger[] }>(`${base()}/polling${pollKey ? `?pollKey=${pollKey}` : ''}`, { bearer: token })).body.data;
  const deadLetters = async (source: string) =>
    (await http.get<{ data: DeadLetter[] }>(`${base()}/dead-letters?source=${source}`, { bearer: token })).body.data;

  beforeAll(async () => {
    system = await startTestSystem([gatewayService, invocationService, pollingService, deadLetterService], {
      environment: { OUTBOUND_ALLOWED_CIDRS: '127.0.0.0/8', ACCESS_CACHE_TTL_MS: '0' },
    });
    http = new HttpClient(system.url('gateway'));
    endpoint = await PollingEndpoint.start();
    project = await createPublishedProject(http, 'CHATBOT', reportingChatbot(endpoint.url));
    // Items that come back must run again (ONE_TIME would skip a customer's second run).
    const settings = await http.patch(`/v1/orgs/${project.orgId}/projects/${project.projectId}/api-settings`, { defaultEnrollmentPolicy: 'EVERY_MATCH' }, { bearer: project.ownerJwt });
    expect(settings.status).toBe(200);
    token = (await issueToken(http, project, ['flow:trigger'])).token;
  });
  afterAll(async () => {
    await secondReplica?.stop();
    await system?.stop();
    await endpoint?.close();
  });

  describe('the API', () => {
    it.each([
      [{ pollKey: 'k', pollEndpoint: 'http://127.0.0.1:9/x' }, 'source is required'],
      [{ source: 's', pollEndpoint: 'http://127.0.0.1:9/x' }, 'pollKey is required'],
      [{ source: 's', pollKey: '', pollEndpoint: 'http://127.0.0.1:9/x' }, 'pollKey is required'],
      [{ source: 's', pollKey: 'k' }, 'pollEndpoint is required'],
      [{ source: 's', pollKey: 'k', pollEndpoint: 'http://127.0.0.1:9/x', intervalMs: 10 }, 'intervalMs must be an integer between 1000 and 86400000'],
      [{ source: 's', pollKey: 'k', pollEndpoint: 'http://127.0.0.1:9/x', intervalMs: 1500.5 }, 'intervalMs must be an integer between 1000 and 86400000'],
      [{ source: 's', pollKey: 'k', pollEndpoint: 'ftp://127.0.0.1/x' }, 'pollEndpoint must be an http or https URL'],
      [{ source: 's', pollKey: 'k', pollEndpoint: 'not a url' }, 'pollEndpoint must be an http or https URL'],
    ])('refuses %j with 400 %s', async (body, message) => {
      const answer = await register(body);
      expect(answer.status).toBe(400);
      expect(answer.body).toEqual({ error: message });
    });

    it('refuses an endpoint the outbound guard would refuse', async () => {
      const answer = await register({ source: 's', pollKey: 'private', pollEndpoint: 'http://10.1.2.3/orders' });
      expect(answer.status).toBe(400);
      expect(answer.body.error).toMatch(/^pollEndpoint is not allowed: /);
    });

    it('registers with the defaults, polls at once with the Authorization header, lists and deletes', async () => {
      const url = endpoint.script('/api/one', [{ json: [] }]);
      const before = Date.now();
      const created = await register({ source: 'crm', pollKey: 'one', pollEndpoint: url, authHeader: 'Bearer poll-secret' });
      expect(created.status).toBe(201);
      const trigger = created.body.data;
      expect(Object.keys(trigger).sort()).toEqual(
        ['id', 'source', 'pollKey', 'dedupeField', 'pollEndpoint', 'intervalMs', 'lastSeenValue', 'lastPolledAt', 'nextPollAt', 'createdAt', 'updatedAt'].sort(),
      );
      expect(trigger).toMatchObject({ source: 'crm', pollKey: 'one', dedupeField: 'id', pollEndpoint: url, intervalMs: 60000, lastSeenValue: null, lastPolledAt: null });
      expect(Math.abs(Date.parse(trigger.nextPollAt as string) - before)).toBeLessThan(5000);

      const [call] = await eventually('the first poll', async () => (endpoint.callsTo('/api/one').length > 0 ? endpoint.callsTo('/api/one') : undefined));
      expect(call!.method).toBe('GET');
      expect(call!.headers['content-type']).toBe('application/json');
      expect(call!.headers.authorization).toBe('Bearer poll-secret');

      const listed = await eventually('lastPolledAt', async () => {
        const [found] = await list('one');
        return found?.lastPolledAt ? found : undefined;
      });
      expect(listed).toMatchObject({ id: trigger.id, authHeader: 'Bearer poll-secret', intervalMs: 60000 });
      expect(Date.parse(listed.nextPollAt as string) - Date.parse(listed.lastPolledAt as string)).toBeGreaterThan(55_000);
      expect((await list()).map((t) => t.pollKey)).toContain('one');

      // Registering the same key again updates the trigger.
      const updated = await register({ source: 'crm2', pollKey: 'one', pollEndpoint: url, intervalMs: 120000 });
      expect(updated.status).toBe(201);
      expect(updated.body.data).toMatchObject({ id: trigger.id, source: 'crm2', intervalMs: 120000 });
      expect((await list('one')).length).toBe(1);

      const missing = await http.delete<{ error: string }>(`${base()}/polling`, { bearer: token });
      expect(missing.status).toBe(400);
      expect(missing.body).toEqual({ error: 'pollKey is required' });
      expect((await http.delete(`${base()}/polling?pollKey=one`, { bearer: token })).status).toBe(200);
      const again = await http.delete<{ error: string }>(`${base()}/polling?pollKey=one`, { bearer: token });
      expect(again.status).toBe(404);
      expect(again.body).toEqual({ error: 'Polling state not found' });
      expect(await list('one')).toEqual([]);
    });

    it('needs the flow:trigger scope', async () => {
      const other = await issueToken(http, project, ['bot:invoke']);
      const answer = await http.get<{ error: string }>(`${base()}/polling`, { bearer: other.token });
      expect(answer.status).toBe(403);
      expect(answer.body).toEqual({ error: 'Insufficient token scope' });
    });
  });

  describe('polls', () => {
    it('takes an array, an object with a data array, or a single object; the flow sees the item plus source and _pollKey', async () => {
      await register({ source: 'shop', pollKey: 'shape-array', pollEndpoint: endpoint.script('/api/array', [{ json: [item(1), item(2)] }]), intervalMs: 60000 });
      await register({ source: 'shop', pollKey: 'shape-data', pollEndpoint: endpoint.script('/api/data', [{ json: { data: [item(3)], page: 1 } }]), intervalMs: 60000 });
      await register({ source: 'shop', pollKey: 'shape-single', pollEndpoint: endpoint.script('/api/single', [{ json: item(4, { total: 9.5 }) }]), intervalMs: 60000 });

      await eventually('array items', async () => (endpoint.seen('shape-array').length === 2 ? true : undefined));
      await eventually('data items', async () => (endpoint.seen('shape-data').length === 1 ? true : undefined));
      await eventually('single item', async () => (endpoint.seen('shape-single').length === 1 ? true : undefined));
      expect(endpoint.seen('shape-array')).toEqual([
        { ...item(1), source: 'shop', _pollKey: 'shape-array' },
        { ...item(2), source: 'shop', _pollKey: 'shape-array' },
      ]);
      expect(endpoint.seen('shape-data')).toEqual([{ ...item(3), source: 'shop', _pollKey: 'shape-data' }]);
      expect(endpoint.seen('shape-single')).toEqual([{ ...item(4, { total: 9.5 }), source: 'shop', _pollKey: 'shape-single' }]);
      // The poll records lastSeenValue once every item's run has ended, just after the flow's
      // last call reached the endpoint.
      await eventually('lastSeenValue', async () => ((await list('shape-array'))[0]?.lastSeenValue === '2' ? true : undefined));
    });

    it('skips only the last processed value, so older items returned again are processed again', async () => {
      const url = endpoint.script('/api/dedupe', [{ json: [item(1), item(2), item(3)] }, { json: [item(3)] }, { json: [item(1), item(2), item(3), item(4)] }, { json: [] }]);
      await register({ source: 'shop', pollKey: 'dedupe', pollEndpoint: url, intervalMs: 1000 });
      await eventually('three polls', async () => (endpoint.callsTo('/api/dedupe').length >= 4 ? true : undefined), 15_000);
      await eventually('runs reported', async () => (endpoint.seen('dedupe').length >= 6 ? true : undefined));
      expect(endpoint.seen('dedupe').map((payload) => payload.id)).toEqual([1, 2, 3, 1, 2, 4]);
      const [trigger] = await list('dedupe');
      expect(trigger!.lastSeenValue).toBe('4');
      await http.delete(`${base()}/polling?pollKey=dedupe`, { bearer: token });
    });

    it('turns failed polls and failed items into dead letters and keeps polling', async () => {
      const url = endpoint.script('/api/flaky', [
        { status: 500, json: { error: 'down' } },
        { raw: 'this is not json' },
        { json: [{ id: 'x1', event: 'order.created' }] },
        { json: [item('x2')] },
        { json: [] },
      ]);
      await register({ source: 'flaky', pollKey: 'flaky', pollEndpoint: url, intervalMs: 1000 });
      await eventually('the fourth poll ran its item', async () => (endpoint.seen('flaky').length === 1 ? true : undefined), 15_000);
      expect(endpoint.seen('flaky')).toEqual([{ ...item('x2'), source: 'flaky', _pollKey: 'flaky' }]);

      const letters = await eventually('three dead letters', async () => {
        const found = await deadLetters('flaky');
        return found.length === 3 ? found : undefined;
      });
      // Newest first.
      const [failedItem, notJson, status500] = letters;
      expect(status500).toMatchObject({
        source: 'flaky',
        targetType: 'polling',
        triggerKey: 'flaky',
        requestPayload: { pollKey: 'flaky', pollEndpoint: url },
        failureReason: 'Poll endpoint answered 500',
        attemptCount: 1,
        replayedAt: null,
        replayStatus: null,
      });
      expect(notJson).toMatchObject({ targetType: 'polling', requestPayload: { pollKey: 'flaky', pollEndpoint: url }, failureReason: 'Poll response is not JSON' });
      expect(failedItem).toMatchObject({
        targetType: 'polling',
        triggerKey: 'flaky',
        requestPayload: { id: 'x1', event: 'order.created', source: 'flaky', _pollKey: 'flaky' },
        attemptCount: 1,
      });
      expect(failedItem!.failureReason).toContain('Payload is missing required keys: customerId');
      for (const letter of letters) {
        expect(Object.keys(letter).sort()).toEqual(
          ['id', 'source', 'targetType', 'triggerKey', 'requestPayload', 'failureReason', 'attemptCount', 'replayedAt', 'replayStatus', 'createdAt', 'updatedAt'].sort(),
        );
      }
      await http.delete(`${base()}/polling?pollKey=flaky`, { bearer: token });
    });
  });

  describe('polls obey the project', () => {
    /** A fresh published project with its own token, so switching it off touches nothing else. */
    async function ownProject() {
      const own = await createPublishedProject(http, 'CHATBOT', reportingChatbot(endpoint.url));
      const settings = `/v1/orgs/${own.orgId}/projects/${own.projectId}/api-settings`;
      expect((await http.patch(settings, { defaultEnrollmentPolicy: 'EVERY_MATCH' }, { bearer: own.ownerJwt })).status).toBe(200);
      const ownToken = (await issueToken(http, own, ['flow:trigger'])).token;
      const ownBase = `/v1/orgs/${own.orgId}/flows/${own.projectId}`;
      return {
        own,
        settings,
        register: (body: Record<string, unknown>) => http.post<{ data: Trigger }>(`${ownBase}/polling`, body, { bearer: ownToken }),
        letters: async () => (await http.get<{ data: DeadLetter[] }>(`${ownBase}/dead-letters`, { bearer: ownToken })).body.data,
      };
    }
    const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
    const sql = (query: string, parameters: unknown[]) => queryDatabase(system.database.url, query, parameters);
    /** A trigger's lease and next due time, as the pollers share them. */
    const triggerRow = async (projectId: string, pollKey: string) => {
      const [row] = await sql('SELECT leased_until, next_poll_at FROM polling.polling_triggers WHERE project_id = $1 AND poll_key = $2', [projectId, pollKey]);
      if (!row) throw new Error(`no trigger ${pollKey}`);
      return row as { leased_until: Date | null; next_poll_at: Date };
    };

    it('skips polls that come due while the master switch is off (no fetch, no dead letter) and resumes when it is on', async () => {
      const { own, settings, register, letters } = await ownProject();
      const url = endpoint.script('/api/switch', [{ json: [] }]);
      expect((await register({ source: 'switch', pollKey: 'switch', pollEndpoint: url, intervalMs: 1000 })).status).toBe(201);
      await eventually('a first poll', async () => (endpoint.callsTo('/api/switch').length >= 1 ? true : undefined));

      expect((await http.patch(settings, { externalApiEnabled: false }, { bearer: own.ownerJwt })).status).toBe(200);
      await eventually('the switch to reach the polling service', async () => {
        const [copy] = await sql('SELECT external_api_enabled FROM polling.project_copies WHERE project_id = $1', [own.projectId]);
        return copy?.external_api_enabled === false ? true : undefined;
      });
      // A poll reads the switch as it comes due. One that read it before it went off may still
      // be fetching: once no poll holds the trigger and the next is due after the switch went
      // off here, every poll still to come reads it off.
      const offAt = Date.now();
      const settled = await eventually('the poll under way to end', async () => {
        const row = await triggerRow(own.projectId, 'switch');
        return row.leased_until === null && row.next_poll_at.getTime() > offAt ? row : undefined;
      });
      const whileOff = endpoint.callsTo('/api/switch').length;
      // Three polls come due and end while the switch is off (the schedule goes on): none fetches.
      await eventually('three polls to come due while off', async () => {
        const row = await triggerRow(own.projectId, 'switch');
        return row.leased_until === null && row.next_poll_at.getTime() >= settled.next_poll_at.getTime() + 3 * 1000 ? true : undefined;
      }, 15_000);
      expect(endpoint.callsTo('/api/switch')).toHaveLength(whileOff);

      expect((await http.patch(settings, { externalApiEnabled: true }, { bearer: own.ownerJwt })).status).toBe(200);
      await eventually('polling to resume', async () => (endpoint.callsTo('/api/switch').length > whileOff ? true : undefined), 5000);
      // The token routes answer 403 while the switch is off, so the dead letters are read now.
      expect(await letters()).toEqual([]);
    });

    it('stops polling a deleted project, and its triggers are gone', async () => {
      const { own, register } = await ownProject();
      const url = endpoint.script('/api/deleted', [{ json: [] }]);
      expect((await register({ source: 'gone', pollKey: 'gone', pollEndpoint: url, intervalMs: 1000 })).status).toBe(201);
      await eventually('a first poll', async () => (endpoint.callsTo('/api/deleted').length >= 1 ? true : undefined));
      expect((await http.delete(`/v1/orgs/${own.orgId}/projects/${own.projectId}`, { bearer: own.ownerJwt })).status).toBe(204);
      await eventually('the deletion to reach the polling service', async () => {
        const [copy] = await sql('SELECT deleted FROM polling.project_copies WHERE project_id = $1', [own.projectId]);
        return copy?.deleted === true ? true : undefined;
      });
      const triggersOf = async () =>
        ((await sql('SELECT count(*)::int AS triggers FROM polling.polling_triggers WHERE project_id = $1', [own.projectId])) as Array<{ triggers: number }>)[0]!
          .triggers;
      expect(await triggersOf()).toBe(0);
      // With its trigger gone there is no schedule left to watch, so the proof that no poll comes
      // is a bounded wait. 300 ms for a poll that read the project just before the deletion (its
      // GET follows that read at once), then 2.5 s: two more of its due times, which would each
      // have fetched.
      await sleep(300);
      const afterDeletion = endpoint.callsTo('/api/deleted').length;
      await sleep(2500);
      expect(endpoint.callsTo('/api/deleted')).toHaveLength(afterDeletion);
      expect(await triggersOf()).toBe(0);
    });

    it('runs the first items of a trigger registered right after create and publish, for three projects in a row', async () => {
      const runs = [];
      for (let i = 0; i < 3; i++) {
        const { register, letters } = await ownProject();
        const name = `fresh-${i}`;
        const url = endpoint.script(`/api/${name}`, [{ json: [item(`${name}-1`)] }, { json: [] }]);
        expect((await register({ source: 'fresh', pollKey: name, pollEndpoint: url, intervalMs: 60000 })).status).toBe(201);
        runs.push({ name, letters });
      }
      for (const { name, letters } of runs) {
        await eventually(`${name}'s item to run`, async () => (endpoint.seen(name).length === 1 ? true : undefined), 10_000);
        expect(await letters()).toEqual([]);
      }
    });
  });

  describe('two replicas', () => {
    it('never poll one trigger twice for one due time', async () => {
      secondReplica = await startService(pollingService, {
        databaseUrl: system.database.url,
        bus: system.bus,
        httpPort: 0,
        environment: system.environment,
        logger: createLogger({ service: 'polling-2', level: process.env.TEST_LOG_LEVEL ?? 'silent' }),
      });
      const keys = Array.from({ length: 20 }, (_, n) => `r${n}`);
      const started = Date.now();
      for (const key of keys) await register({ source: 'replicas', pollKey: key, pollEndpoint: endpoint.script(`/api/${key}`, [{ json: [] }]), intervalMs: 1000 });
      await eventually('four polls of every trigger', async () => (keys.every((key) => endpoint.callsTo(`/api/${key}`).length >= 4) ? true : undefined), 20_000);
      for (const key of keys) await http.delete(`${base()}/polling?pollKey=${key}`, { bearer: token });
      const elapsed = Date.now() - started;
      for (const key of keys) {
        const times = endpoint.callsTo(`/api/${key}`).map((call) => call.at);
        expect(times.length).toBeGreaterThanOrEqual(4);
        expect(times.length).toBeLessThanOrEqual(Math.ceil(elapsed / 1000) + 1);
        // One poll per due time: due times are a second apart, so two polls of one due time
        // would arrive close together.
        for (let i = 1; i < times.length; i++) expect(times[i]! - times[i - 1]!).toBeGreaterThan(500);
      }
      // Both replicas took part, so the spacing above is the leases at work, not one idle replica.
      const polled = async (url: string) => {
        const metrics = await (await fetch(`${url}/metrics`)).text();
        return Number(/^runline_polling_polls_total\{[^}]*outcome="ok"[^}]*\} (\d+)/m.exec(metrics)?.[1] ?? 0);
      };
      const [first, second] = [await polled(system.url('polling')), await polled(secondReplica.url)];
      expect(first).toBeGreaterThan(0);
      expect(second).toBeGreaterThan(0);
    }, 30_000);
  });
});
