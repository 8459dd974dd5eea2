import pg from 'pg';
import { gatewayService } from '@runline/gateway-service';
import { invocationService } from '@runline/invocation-service';
import { schedulerService } from '@runline/scheduler-service';
import { EVENT_TYPES, FailureKind, INVOCATION_EVENT_SUBJECTS, RunMode, RunTarget } from '@runline/contracts';
import { HttpClient, queryDatabase, startTestSystem, type TestSystem } from '@runline/testing';
import { createPublishedProject, issueToken, VALID_CHATBOT_DEFINITION, type ProjectFixture } from './gateway-fixtures.js';
import {
  eventually,
  gate,
  InvocationEventRecorder,
  payloadOf,
  startLocalServer,
  waitForFinalInvocation,
  type InvocationBody,
  type LocalReply,
  type LocalServer,
} from './support/lifecycle-support.js';

const flowBody = { event: 'order.created', customerId: 'c-1', orderId: '42' };

/** An automation whose workflow first calls `url`, then returns what it got. */
function callingAutomation(url: string, retry?: { maxAttempts: number; backoffSeconds: number }): object {
  return {
    schemaVersion: 1,
    workflow: {
      trigger: { externalEnabled: true, key: 'external_event', expectedPayload: { orderId: '' }, ...(retry ? { retry } : {}) },
      start: 'call',
      nodes: {
        call: { type: 'http', method: 'POST', url: `${url}/orders`, body: "{ 'orderId': payload.orderId }", saveAs: 'reply', next: 'done' },
        done: { type: 'return', value: "{ 'ok': true, 'calls': vars.reply.body.calls }" },
      },
    },
  };
}

/** A chatbot whose flow calls `url` and says the status it got. */
function callingChatbot(url: string): object {
  return {
    schemaVersion: 1,
    bot: VALID_CHATBOT_DEFINITION.bot,
    flow: {
      trigger: { externalEnabled: true, key: 'external_event' },
      start: 'call',
      nodes: {
        call: { type: 'http', method: 'GET', url: `${url}/slow`, saveAs: 'reply', next: 'say' },
        say: { type: 'message', text: 'Answered {{ vars.reply.status }}', next: 'done' },
        done: { type: 'end' },
      },
    },
  };
}

/**
 * The life of a run as other services and clients see it: transition events on
 * invocation.evt.*, automation retries and their dead-letter event, the master switch for
 * queued runs, and the async time limit.
 */
describe('runs: lifecycle', () => {
  let system: TestSystem;
  let http: HttpClient;
  let recorder: InvocationEventRecorder;
  const servers: LocalServer[] = [];
  const sql = (query: string, parameters: unknown[] = []) => queryDatabase(system.database.url, query, parameters);
  /**
   * Waits until the recorder has every event the invocation service has emitted for run `id`
   * (its outbox, written with each change of the run). Once the run has ended nothing emits
   * more, so what the recorder holds then is all there is: no wait for stray events is needed.
   */
  const everyEventOf = (id: string) =>
    eventually(`every event of ${id}`, async () => {
      const [row] = await sql(
        `SELECT count(*)::int AS emitted FROM invocation.outbox WHERE subject LIKE 'invocation.evt.%' AND position(convert_to($1, 'UTF8') IN data) > 0`,
        [id],
      );
      return recorder.of(id).length >= Number(row?.emitted) ? true : undefined;
    });

  async function server(reply: (call: number) => LocalReply | Promise<LocalReply>): Promise<LocalServer> {
    const started = await startLocalServer(reply);
    servers.push(started);
    return started;
  }

  async function projectWithToken(type: 'CHATBOT' | 'AUTOMATION', definition?: object) {
    const project = await createPublishedProject(http, type, definition);
    const issued = await issueToken(http, project, [type === 'CHATBOT' ? 'flow:trigger' : 'automation:trigger']);
    return { project, token: issued.token, tokenId: issued.id };
  }

  const runUrl = (project: ProjectFixture, path: string) => `/v1/orgs/${project.orgId}/${path}/${project.projectId}`;

  beforeAll(async () => {
    // Retry backoffs are scheduler jobs.
    system = await startTestSystem([gatewayService, invocationService, schedulerService], {
      environment: {
        OUTBOUND_ALLOWED_CIDRS: '127.0.0.0/8',
        // One async run at a time: lets the master-switch test hold a queued run back.
        RUN_CONCURRENCY: '1',
        // One async run executed as its request waits at a time (a self-contained flow's).
        ASYNC_INLINE_RUNS: '1',
        ACCESS_CACHE_TTL_MS: '0',
      },
    });
    http = new HttpClient(system.url('gateway'));
    recorder = await InvocationEventRecorder.start(system.busPrefix);
  });
  afterAll(async () => {
    await recorder?.stop();
    await system?.stop();
    for (const started of servers) await started.close();
  });
  afterEach(() => {
    expect(recorder.decodeErrors).toEqual([]);
  });

  describe('events on invocation.evt.* for internal subscribers', () => {
    it('an async run publishes InvocationQueued, InvocationStarted, InvocationSucceeded, in order, naming the run', async () => {
      const { project, token, tokenId } = await projectWithToken('CHATBOT');
      const accepted = await http.post<InvocationBody>(runUrl(project, 'flows') + '/trigger-async', flowBody, { bearer: token });
      expect(accepted.status).toBe(202);
      const id = accepted.body.invocationId;

      await recorder.waitFor(id, EVENT_TYPES.INVOCATION_SUCCEEDED);
      const events = recorder.of(id);
      expect(events.map((event) => event.envelope.type)).toEqual([
        'invocation.InvocationQueued.v1',
        'invocation.InvocationStarted.v1',
        'invocation.InvocationSucceeded.v1',
      ]);
      expect(events.map((event) => event.subject)).toEqual([
        INVOCATION_EVENT_SUBJECTS.INVOCATION_QUEUED,
        INVOCATION_EVENT_SUBJECTS.INVOCATION_STARTED,
        INVOCATION_EVENT_SUBJECTS.INVOCATION_SUCCEEDED,
      ]);
      for (const { envelope } of events) {
        expect(envelope).toMatchObject({ invocationId: id, orgId: project.orgId, projectId: project.projectId });
      }

      const queued = payloadOf(events[0], EVENT_TYPES.INVOCATION_QUEUED);
      expect(queued.request).toMatchObject({
        target: RunTarget.FLOW,
        mode: RunMode.ASYNC,
        triggerSource: 'WEBHOOK',
        environment: 'PRODUCTION',
        enrollmentPolicy: 'ONE_TIME',
        onErrorPolicy: 'ABORT',
        startedByTokenId: tokenId,
        definitionVersion: 1,
        maxAttempts: 1,
      });
      expect(JSON.parse(queued.request?.requestPayloadJson ?? 'null')).toEqual(flowBody);
      const started = payloadOf(events[1], EVENT_TYPES.INVOCATION_STARTED);
      expect(started.attempt).toBe(1);
      expect(started.request).toBeUndefined();
      const succeeded = payloadOf(events[2], EVENT_TYPES.INVOCATION_SUCCEEDED);
      expect(JSON.parse(succeeded.resultJson)).toEqual({ messages: ['Order 42'], actions: [] });
      expect(Number(succeeded.durationMs)).toBeGreaterThanOrEqual(0);

      // The same run as the API shows it.
      const shown = await waitForFinalInvocation(http, project.orgId, id, token);
      expect(shown).toMatchObject({ status: 'SUCCEEDED', result: { messages: ['Order 42'], actions: [] } });
    });

    it('a sync run publishes InvocationStarted (carrying the request) then InvocationSucceeded', async () => {
      const { project, token } = await projectWithToken('CHATBOT');
      const answer = await http.post<InvocationBody>(runUrl(project, 'flows') + '/trigger', flowBody, { bearer: token });
      expect(answer.status).toBe(200);
      const id = answer.body.invocationId;

      await recorder.waitFor(id, EVENT_TYPES.INVOCATION_SUCCEEDED);
      expect(recorder.typesOf(id)).toEqual(['invocation.InvocationStarted.v1', 'invocation.InvocationSucceeded.v1']);
      const started = payloadOf(recorder.of(id)[0], EVENT_TYPES.INVOCATION_STARTED);
      expect(started.attempt).toBe(1);
      expect(started.request).toMatchObject({ target: RunTarget.FLOW, mode: RunMode.SYNC, triggerSource: 'WEBHOOK' });
      expect(JSON.parse(started.request?.requestPayloadJson ?? 'null')).toEqual(flowBody);
    });

    it('a request that fails the trigger checks publishes exactly one InvocationFailed of kind TRIGGER_CHECK', async () => {
      const { project, token } = await projectWithToken('CHATBOT');
      const answer = await http.post<InvocationBody>(runUrl(project, 'flows') + '/trigger', { event: 'order.created' }, { bearer: token });
      expect(answer.status).toBe(500);
      const id = answer.body.invocationId;

      const failed = await recorder.waitFor(id, EVENT_TYPES.INVOCATION_FAILED);
      await everyEventOf(id);
      expect(recorder.typesOf(id)).toEqual(['invocation.InvocationFailed.v1']);
      const payload = payloadOf(failed, EVENT_TYPES.INVOCATION_FAILED);
      expect(payload).toMatchObject({ kind: FailureKind.TRIGGER_CHECK, errorMessage: 'Payload is missing required keys: customerId', attempt: 0 });
      expect(payload.request).toMatchObject({ target: RunTarget.FLOW, mode: RunMode.SYNC });
    });
  });

  describe('automation retries (trigger retry setting, async runs)', () => {
    it('retry {maxAttempts: 3, backoffSeconds: 0.2}: two failing calls, then success → SUCCEEDED after 3 attempts', async () => {
      const endpoint = await server((call) => (call <= 2 ? { status: 500, body: { error: 'try later' } } : { status: 200, body: { calls: call } }));
      const { project, token } = await projectWithToken('AUTOMATION', callingAutomation(endpoint.url, { maxAttempts: 3, backoffSeconds: 0.2 }));
      const accepted = await http.post<InvocationBody>(runUrl(project, 'automations') + '/trigger-async', { payload: { orderId: 'o-1' } }, { bearer: token });
      expect(accepted.status).toBe(202);
      const id = accepted.body.invocationId;

      const finished = await waitForFinalInvocation(http, project.orgId, id, token);
      expect(finished).toMatchObject({ status: 'SUCCEEDED', attempts: 3, maxAttempts: 3, errorMessage: null, result: { ok: true, calls: 3 } });
      expect(endpoint.calls).toHaveLength(3);
      expect(endpoint.calls.map((call) => JSON.parse(call.body))).toEqual([{ orderId: 'o-1' }, { orderId: 'o-1' }, { orderId: 'o-1' }]);

      await recorder.waitFor(id, EVENT_TYPES.INVOCATION_SUCCEEDED);
      expect(recorder.typesOf(id)).toEqual([
        'invocation.InvocationQueued.v1',
        'invocation.InvocationStarted.v1',
        'invocation.InvocationRetryScheduled.v1',
        'invocation.InvocationStarted.v1',
        'invocation.InvocationRetryScheduled.v1',
        'invocation.InvocationStarted.v1',
        'invocation.InvocationSucceeded.v1',
      ]);
      const attempts = recorder.of(id).filter((event) => event.envelope.type === EVENT_TYPES.INVOCATION_STARTED);
      expect(attempts.map((event) => payloadOf(event, EVENT_TYPES.INVOCATION_STARTED).attempt)).toEqual([1, 2, 3]);
    });

    it('retry {maxAttempts: 2} and an endpoint that always fails → FAILED after 2 calls, one retries-exhausted event with the redacted request', async () => {
      const endpoint = await server(() => ({ status: 500, body: { error: 'down' } }));
      const { project, token } = await projectWithToken('AUTOMATION', callingAutomation(endpoint.url, { maxAttempts: 2, backoffSeconds: 0.2 }));
      const secret = 'sk_live_very-secret-value-4242';
      const request = { event: 'order.created', payload: { orderId: 'o-2', apiKey: secret } };
      const accepted = await http.post<InvocationBody>(runUrl(project, 'automations') + '/trigger-async', request, { bearer: token });
      expect(accepted.status).toBe(202);
      const id = accepted.body.invocationId;

      const finished = await waitForFinalInvocation(http, project.orgId, id, token);
      expect(finished).toMatchObject({ status: 'FAILED', attempts: 2, errorMessage: 'node "call": POST request answered HTTP 500' });
      expect(endpoint.calls).toHaveLength(2);

      const exhausted = await recorder.waitFor(id, EVENT_TYPES.INVOCATION_RETRIES_EXHAUSTED);
      await everyEventOf(id);
      expect(recorder.of(id).filter((event) => event.envelope.type === EVENT_TYPES.INVOCATION_RETRIES_EXHAUSTED)).toHaveLength(1);
      // README: published right after the run's InvocationFailed.
      expect(recorder.typesOf(id).slice(-2)).toEqual(['invocation.InvocationFailed.v1', 'invocation.InvocationRetriesExhausted.v1']);
      expect(exhausted.subject).toBe('invocation.evt.invocation-retries-exhausted');
      const payload = payloadOf(exhausted, EVENT_TYPES.INVOCATION_RETRIES_EXHAUSTED);
      expect(payload).toMatchObject({
        attemptCount: 2,
        targetType: 'FLOW',
        source: 'automation',
        triggerKey: 'external_event',
        failureReason: 'node "call": POST request answered HTTP 500',
      });
      expect(JSON.parse(payload.requestPayloadJson)).toEqual({ event: 'order.created', payload: { orderId: 'o-2', apiKey: '[REDACTED]' } });
      expect(payload.requestPayloadJson).not.toContain(secret);
      expect(payload.sealedRequestJson).not.toBe('');
      expect(payload.sealedRequestJson).not.toContain(secret);
      expect(payload.sealedRequestJson).not.toContain('o-2');
      // The stored run is redacted as well.
      expect(finished.requestPayload).toEqual({ event: 'order.created', payload: { orderId: 'o-2', apiKey: '[REDACTED]' } });
    });

    it('without a retry setting an async automation run makes one attempt only (the default: no retry)', async () => {
      const endpoint = await server(() => ({ status: 500, body: { error: 'down' } }));
      const { project, token } = await projectWithToken('AUTOMATION', callingAutomation(endpoint.url));
      const accepted = await http.post<InvocationBody>(runUrl(project, 'automations') + '/trigger-async', { payload: { orderId: 'o-3' } }, { bearer: token });
      expect(accepted.status).toBe(202);
      const id = accepted.body.invocationId;

      const finished = await waitForFinalInvocation(http, project.orgId, id, token);
      expect(finished).toMatchObject({ status: 'FAILED', attempts: 1, maxAttempts: 1 });
      // FAILED is final: no retry can come. Every event it emitted has arrived.
      await recorder.waitFor(id, EVENT_TYPES.INVOCATION_RETRIES_EXHAUSTED);
      await everyEventOf(id);
      expect(endpoint.calls).toHaveLength(1);
      expect(recorder.typesOf(id)).not.toContain(EVENT_TYPES.INVOCATION_RETRY_SCHEDULED);
      const exhausted = payloadOf(
        recorder.of(id).find((event) => event.envelope.type === EVENT_TYPES.INVOCATION_RETRIES_EXHAUSTED),
        EVENT_TYPES.INVOCATION_RETRIES_EXHAUSTED,
      );
      expect(exhausted.attemptCount).toBe(1);
    });
  });

  describe('an async run of a self-contained flow', () => {
    /** How many RunInvocation commands the invocation service emitted for run `id` (its outbox). */
    const startCommandsOf = async (id: string) => {
      const [row] = await sql(
        `SELECT count(*)::int AS commands FROM invocation.outbox WHERE subject = 'invocation.cmd.run-invocation' AND position(convert_to($1, 'UTF8') IN data) > 0`,
        [id],
      );
      return Number(row?.commands);
    };
    // ONE_TIME enrollment claims its subject before the run, a write of its own: such runs always
    // go through the queue, so these use EVERY_MATCH.
    const everyMatch = { ...flowBody, enrollmentPolicy: 'EVERY_MATCH' };
    const viewOf = async (id: string) => {
      const [row] = await sql(`SELECT document FROM invocation.invocation_views WHERE id = $1`, [id]);
      return row?.document as InvocationBody | undefined;
    };

    it('with room among ASYNC_INLINE_RUNS, is executed as its request waits and recorded once, ended: SUCCEEDED at the 202, no start command, the events of a queued run', async () => {
      const { project, token } = await projectWithToken('CHATBOT');
      const accepted = await http.post<InvocationBody>(runUrl(project, 'flows') + '/trigger-async', everyMatch, { bearer: token });
      expect(accepted).toMatchObject({ status: 202, body: { status: 'QUEUED', scheduledFor: null } });
      const id = accepted.body.invocationId;

      // Recorded before the 202 went out, already ended.
      expect(await viewOf(id)).toMatchObject({ status: 'SUCCEEDED', result: { messages: ['Order 42'], actions: [] } });
      expect(await startCommandsOf(id)).toBe(0);
      await everyEventOf(id);
      expect(recorder.of(id).map((event) => event.envelope.type)).toEqual([
        'invocation.InvocationQueued.v1',
        'invocation.InvocationStarted.v1',
        'invocation.InvocationSucceeded.v1',
      ]);
      const shown = await waitForFinalInvocation(http, project.orgId, id, token);
      expect(Date.parse(String(shown.createdAt))).toBeLessThanOrEqual(Date.parse(String(shown.startedAt)));
      expect(Date.parse(String(shown.startedAt))).toBeLessThanOrEqual(Date.parse(String(shown.completedAt)));
    });

    it('while ASYNC_INLINE_RUNS runs are in progress, is recorded QUEUED with its start command and runs from the queue', async () => {
      // ASYNC_INLINE_RUNS is 1 and run A holds it until its write, which the test holds back by
      // locking the read models' table against inserts; run B comes meanwhile.
      const { project, token } = await projectWithToken('CHATBOT');
      const writesWaiting = async () => {
        const [row] = await sql(
          // (The statement's text is cut at track_activity_query_size: any statement waiting for a lock here counts.)
          `SELECT count(*)::int AS waiting FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`,
        );
        return Number(row?.waiting);
      };
      const lock = new pg.Client({ connectionString: system.database.url });
      await lock.connect();
      let locked = true;
      const unlock = async () => {
        if (!locked) return;
        locked = false;
        await lock.query('ROLLBACK');
      };
      try {
        await lock.query('BEGIN');
        await lock.query('LOCK TABLE invocation.invocation_views IN SHARE MODE');
        const a = http.post<InvocationBody>(runUrl(project, 'flows') + '/trigger-async', { ...everyMatch, orderId: 'a' }, { bearer: token });
        await eventually('run A at its write', async () => ((await writesWaiting()) >= 1 ? true : undefined));
        const metrics = await (await fetch(`${system.url('invocation')}/metrics`)).text();
        expect(metrics).toMatch(/^runline_invocation_inline_runs_in_progress\{[^}]*\} 1$/m);
        const b = http.post<InvocationBody>(runUrl(project, 'flows') + '/trigger-async', { ...everyMatch, orderId: 'b' }, { bearer: token });
        await eventually('run B at its write', async () => ((await writesWaiting()) >= 2 ? true : undefined));
        await unlock();
        const [first, second] = await Promise.all([a, b]);
        expect(first).toMatchObject({ status: 202, body: { status: 'QUEUED' } });
        expect(second).toMatchObject({ status: 202, body: { status: 'QUEUED' } });
        expect(await startCommandsOf(first.body.invocationId)).toBe(0);
        expect(await startCommandsOf(second.body.invocationId)).toBe(1);
        for (const [answer, orderId] of [
          [first, 'a'],
          [second, 'b'],
        ] as const) {
          expect(await waitForFinalInvocation(http, project.orgId, answer.body.invocationId, token)).toMatchObject({
            status: 'SUCCEEDED',
            result: { messages: [`Order ${orderId}`], actions: [] },
          });
        }
      } finally {
        await unlock();
        await lock.end();
      }
    });

    it('that runs longer than an accept may wait for it (ASYNC_INLINE_RUN_MS) is run from the queue under the full time limit', async () => {
      // The flow lasts SPIN_MS of wall-clock time by construction, on a fast CPU as on a slow one:
      // it notes $millis() as it starts, then goes round `spin` until $millis() has moved SPIN_MS
      // on (the engine's clock, ports.now(), is Date.now() as well). ASYNC_INLINE_RUN_MS (20 ms,
      // checked by the engine before each node) is therefore always spent before the flow can
      // reach `say`. A fixed amount of work cannot promise that: six steps of `$sum` took tens of
      // ms each when written, and under 20 ms in all on a faster CPU, and the run was recorded
      // inline. Each round also sums 5 × 100,000 numbers (about 10 ms here), only to keep the
      // rounds few: a machine 100 times faster still ends in about 1,000 steps at most
      // (RUN_MAX_STEPS), one 100 times slower still evaluates each round within the expression
      // guard (1 s), and the queued run ends after SPIN_MS plus one round, far inside its limit.
      const SPIN_MS = 100;
      const { project, token } = await projectWithToken('CHATBOT', {
        schemaVersion: 1,
        bot: VALID_CHATBOT_DEFINITION.bot,
        flow: {
          trigger: { externalEnabled: true, key: 'external_event' },
          start: 'begin',
          nodes: {
            begin: { type: 'set', values: { since: '$millis()', total: '$sum([1..30000])' }, next: 'spin' },
            spin: { type: 'branch', cases: [{ if: `$sum([1..5].$sum([1..100000])) > 0 and $millis() - vars.since < ${SPIN_MS}`, next: 'spin' }], else: 'say' },
            say: { type: 'message', text: 'Total {{ vars.total }}', next: 'done' },
            done: { type: 'end' },
          },
        },
      });
      const accepted = await http.post<InvocationBody>(runUrl(project, 'flows') + '/trigger-async', everyMatch, { bearer: token });
      expect(accepted).toMatchObject({ status: 202, body: { status: 'QUEUED' } });
      const id = accepted.body.invocationId;
      expect(await startCommandsOf(id)).toBe(1);
      expect(await waitForFinalInvocation(http, project.orgId, id, token)).toMatchObject({
        status: 'SUCCEEDED',
        result: { messages: ['Total 450015000'], actions: [] },
      });
      await everyEventOf(id);
      // The attempt given up on before the record left no trace.
      expect(recorder.of(id).map((event) => event.envelope.type)).toEqual([
        'invocation.InvocationQueued.v1',
        'invocation.InvocationStarted.v1',
        'invocation.InvocationSucceeded.v1',
      ]);
    });
  });

  describe('master switch', () => {
    it('a run still QUEUED when Enable External API is switched off fails when it comes up', async () => {
      // RUN_CONCURRENCY is 1: run A holds the only slot at a gated endpoint, so run B stays QUEUED
      // while the switch goes off, and comes up only when the test opens the gate.
      const held = gate();
      const endpoint = await server(async () => {
        await held.opened;
        return { status: 200, body: {} };
      });
      const { project, token } = await projectWithToken('CHATBOT', callingChatbot(endpoint.url));
      try {
        const a = await http.post<InvocationBody>(runUrl(project, 'flows') + '/trigger-async', { ...flowBody, customerId: 'a' }, { bearer: token });
        expect(a.status).toBe(202);
        await eventually('run A at the endpoint', async () => (endpoint.calls.length > 0 ? true : undefined));
        const b = await http.post<InvocationBody>(runUrl(project, 'flows') + '/trigger-async', { ...flowBody, customerId: 'b' }, { bearer: token });
        expect(b).toMatchObject({ status: 202, body: { status: 'QUEUED' } });

        const settings = `/v1/orgs/${project.orgId}/projects/${project.projectId}/api-settings`;
        expect((await http.patch(settings, { externalApiEnabled: false }, { bearer: project.ownerJwt })).status).toBe(200);
        // The invocation service learns of the switch from the gateway's event (its project copy),
        // and keeps a copy for up to a second.
        await eventually('the switch in the invocation service', async () => {
          const [row] = await sql('SELECT external_api_enabled FROM invocation.project_copies WHERE project_id = $1', [project.projectId]);
          return row?.external_api_enabled === false ? true : undefined;
        });
        // Its copy in memory lives up to a second (a timer, not work to wait for): past it, B
        // still waits, and will read the switch off when it starts.
        await new Promise((resolve) => setTimeout(resolve, 1200));
        const [queued] = await sql(`SELECT document->>'status' AS status FROM invocation.invocation_views WHERE id = $1`, [b.body.invocationId]);
        expect(queued?.status).toBe('QUEUED');
        held.open();

        const ended = await eventually('run B to end', async () => {
          const [row] = await sql(`SELECT document FROM invocation.invocation_views WHERE id = $1`, [b.body.invocationId]);
          const document = row?.document as InvocationBody | undefined;
          return document && ['SUCCEEDED', 'FAILED', 'TIMEOUT', 'CANCELLED'].includes(document.status) ? document : undefined;
        });
        expect(ended).toMatchObject({ status: 'FAILED', errorMessage: 'External API access is disabled for this project' });
        expect(endpoint.calls).toHaveLength(1);
        const failed = payloadOf(await recorder.waitFor(b.body.invocationId, EVENT_TYPES.INVOCATION_FAILED), EVENT_TYPES.INVOCATION_FAILED);
        expect(failed.kind).toBe(FailureKind.EXTERNAL_API_DISABLED);

        // Calls are refused while it is off; once on, the failed run reads like any other.
        expect(await http.get(`/v1/orgs/${project.orgId}/external-invocations/${b.body.invocationId}`, { bearer: token })).toMatchObject({
          status: 403,
          body: { error: 'External API access is disabled for this project' },
        });
        expect((await http.patch(settings, { externalApiEnabled: true }, { bearer: project.ownerJwt })).status).toBe(200);
        expect(await waitForFinalInvocation(http, project.orgId, b.body.invocationId, token)).toMatchObject({
          status: 'FAILED',
          errorMessage: 'External API access is disabled for this project',
          startedAt: null,
        });
        expect(await waitForFinalInvocation(http, project.orgId, a.body.invocationId, token)).toMatchObject({ status: 'SUCCEEDED' });
      } finally {
        held.open();
      }
    });
  });
});

describe('runs: async time limit', () => {
  let system: TestSystem;
  let http: HttpClient;
  let slow: LocalServer;
  // The endpoint answers only once the test has seen the run end: whatever ended it, it was not
  // the answer (a check of the time taken would depend on the machine's speed instead).
  const answer = gate();

  beforeAll(async () => {
    slow = await startLocalServer(async () => {
      await answer.opened;
      return { status: 200, body: {} };
    });
    system = await startTestSystem([gatewayService, invocationService], {
      environment: { OUTBOUND_ALLOWED_CIDRS: '127.0.0.0/8', ASYNC_RUN_TIMEOUT_MS: '1000' },
    });
    http = new HttpClient(system.url('gateway'));
  });
  afterAll(async () => {
    answer.open();
    await system?.stop();
    await slow?.close();
  });

  it('an async run whose http node outlasts ASYNC_RUN_TIMEOUT_MS ends TIMEOUT with a "Time limit" error', async () => {
    const project = await createPublishedProject(http, 'CHATBOT', callingChatbot(slow.url));
    const token = (await issueToken(http, project, ['flow:trigger'])).token;
    const accepted = await http.post<InvocationBody>(`/v1/orgs/${project.orgId}/flows/${project.projectId}/trigger-async`, flowBody, { bearer: token });
    expect(accepted.status).toBe(202);

    // Ended by the time limit (1 s), not by the endpoint's answer: it has not answered yet.
    const finished = await waitForFinalInvocation(http, project.orgId, accepted.body.invocationId, token);
    answer.open();
    expect(finished).toMatchObject({ status: 'TIMEOUT', result: null });
    expect(finished.errorMessage).toMatch(/^Time limit of 1000 ms exceeded/);
    expect(slow.calls).toHaveLength(1);
  });
});
