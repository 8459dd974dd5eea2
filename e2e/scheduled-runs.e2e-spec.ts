import { gatewayService } from '@runline/gateway-service';
import { invocationService } from '@runline/invocation-service';
import { schedulerService } from '@runline/scheduler-service';
import { HttpClient, queryDatabase, startTestSystem, type TestSystem } from '@runline/testing';
import { createPublishedProject, issueToken, type ProjectFixture } from './gateway-fixtures.js';
import { eventually, startLocalServer, waitForFinalInvocation, type InvocationBody, type LocalServer } from './support/lifecycle-support.js';
import { holdRows } from './support/row-locks.js';
import { SPEC_INVOCATION_FIELDS } from './support/runs-support.js';
import { waitingAutomation } from './support/automations.js';

/** An automation that calls the customer endpoint with its order id, then returns. */
function callingAutomation(url: string): object {
  return {
    schemaVersion: 1,
    workflow: {
      trigger: { externalEnabled: true, key: 'external_event', expectedPayload: { orderId: '' } },
      start: 'call',
      nodes: {
        call: { type: 'http', method: 'POST', url: `${url}/orders`, body: "{ 'orderId': payload.orderId }", saveAs: 'reply', next: 'done' },
        done: { type: 'return', value: "{ 'ok': true }" },
      },
    },
  };
}

const DISABLED = 'External API access is disabled for this project';

/**
 * Scheduled runs end to end: the gateway, the invocation service and the scheduler on real
 * NATS and PostgreSQL, driven over HTTP like a client. The customer endpoint is a real local
 * server that counts the calls each run makes.
 */
describe('scheduled runs', () => {
  let system: TestSystem;
  let http: HttpClient;
  let endpoint: LocalServer;
  const sql = (query: string, parameters: unknown[] = []) => queryDatabase(system.database.url, query, parameters);

  beforeAll(async () => {
    system = await startTestSystem([gatewayService, invocationService, schedulerService], {
      environment: { OUTBOUND_ALLOWED_CIDRS: '127.0.0.0/8', ACCESS_CACHE_TTL_MS: '0' },
    });
    http = new HttpClient(system.url('gateway'));
    endpoint = await startLocalServer(() => ({ status: 200, body: { ok: true } }));
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
  const triggerAsync = (project: ProjectFixture, token: string, body: object) =>
    http.post<InvocationBody>(`/v1/orgs/${project.orgId}/automations/${project.projectId}/trigger-async`, body, { bearer: token });
  const read = (project: ProjectFixture, token: string, id: string) =>
    http.get<InvocationBody>(`/v1/orgs/${project.orgId}/external-invocations/${id}`, { bearer: token });
  const patch = (project: ProjectFixture, token: string, id: string, body: object) =>
    http.patch<InvocationBody>(`/v1/orgs/${project.orgId}/external-invocations/${id}`, body, { bearer: token });
  const callsFor = (orderId: string) => endpoint.calls.filter((call) => call.body.includes(`"${orderId}"`)).length;
  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

  /** The run's job in the scheduler's table, once the scheduler has recorded it. */
  const jobOf = async (invocationId: string) => {
    const name = `run-${invocationId}`;
    await eventually(`the scheduler to record ${name}`, async () => ((await schedulerJob(name)) ? true : undefined));
    return name;
  };
  const schedulerJob = async (name: string) =>
    (await sql('SELECT status FROM scheduler.scheduled_jobs WHERE name = $1', [name]))[0]?.status as string | undefined;
  /** ScheduledJobFired events the scheduler emitted for the job: written with the claim, so final once it committed. */
  const firedEvents = async (name: string) =>
    (
      await sql(
        `SELECT count(*)::int AS events FROM scheduler.outbox WHERE subject LIKE '%scheduled-job-fired' AND position(convert_to($1, 'UTF8') IN data) > 0`,
        [name],
      )
    )[0]!.events as number;
  const startsOf = async (invocationId: string) =>
    (await sql(`SELECT count(*)::int AS starts FROM invocation.invocation_events WHERE type = 'InvocationStarted' AND invocation_id = $1`, [invocationId]))[0]!
      .starts as number;

  describe('runAt and delaySeconds', () => {
    it('delaySeconds: 202 SCHEDULED with scheduledFor; the run waits, then starts at its time and finishes like any async run', async () => {
      const { project, token } = await automation();
      const before = Date.now();
      const accepted = await triggerAsync(project, token, { payload: { orderId: 'delay-1' }, delaySeconds: 1 });
      expect(accepted.status).toBe(202);
      expect(accepted.body.status).toBe('SCHEDULED');
      const scheduledFor = Date.parse(accepted.body.scheduledFor as string);
      expect(scheduledFor).toBeGreaterThanOrEqual(before + 1000 - 5);
      expect(scheduledFor).toBeLessThanOrEqual(Date.now() + 1000);

      const waiting = await read(project, token, accepted.body.invocationId);
      expect(waiting.body).toMatchObject({
        status: 'SCHEDULED',
        mode: 'ASYNC',
        triggerSource: 'SCHEDULE',
        scheduledFor: accepted.body.scheduledFor,
        schedulerStatus: 'SCHEDULED',
        schedulerJobName: `run-${accepted.body.invocationId}`,
        startedAt: null,
        completedAt: null,
      });
      expect(callsFor('delay-1')).toBe(0);

      const done = await waitForFinalInvocation(http, project.orgId, accepted.body.invocationId, token, 10_000);
      expect(done).toMatchObject({ status: 'SUCCEEDED', result: { ok: true }, schedulerStatus: 'FIRED', scheduledFor: accepted.body.scheduledFor });
      // Never before its time. How late after it depends on the machine: `npm run bench:scheduling`
      // measures it (startedAt − scheduledFor, under load); the wait above bounds it only against hanging.
      expect(Date.parse(done.startedAt as string)).toBeGreaterThanOrEqual(scheduledFor);
      expect(callsFor('delay-1')).toBe(1);
    });

    it('runAt with an offset: starts at that instant', async () => {
      const { project, token } = await automation();
      const at = new Date(Date.now() + 1200);
      // The same instant written with a +02:00 offset.
      const local = new Date(at.getTime() + 2 * 3600_000).toISOString().replace('Z', '+02:00');
      const accepted = await triggerAsync(project, token, { payload: { orderId: 'offset-1' }, runAt: local });
      expect(accepted.status).toBe(202);
      expect(accepted.body).toMatchObject({ status: 'SCHEDULED', scheduledFor: at.toISOString() });
      const done = await waitForFinalInvocation(http, project.orgId, accepted.body.invocationId, token, 10_000);
      expect(done.status).toBe('SUCCEEDED');
      expect(Date.parse(done.startedAt as string)).toBeGreaterThanOrEqual(at.getTime());
    });

    it('a scheduled run is not checked against the Trigger node when it fires', async () => {
      const { project, token } = await automation();
      // expectedPayload wants orderId; an immediate run without it fails the trigger check.
      const immediate = await triggerAsync(project, token, { payload: { other: 1 } });
      expect(immediate.status).toBe(500);
      expect(immediate.body.status).toBe('FAILED');

      const scheduled = await triggerAsync(project, token, { payload: { other: 2 }, delaySeconds: 0.5 });
      expect(scheduled.body.status).toBe('SCHEDULED');
      const done = await waitForFinalInvocation(http, project.orgId, scheduled.body.invocationId, token);
      expect(done.status).toBe('SUCCEEDED');
    });

    it('with Enable External API off when it comes due, the scheduled run FAILS and never executes', async () => {
      const { project, token } = await automation();
      const accepted = await triggerAsync(project, token, { payload: { orderId: 'off-1' }, delaySeconds: 2 });
      expect(accepted.body.status).toBe('SCHEDULED');
      // The job is held (its claim skips the row) until the switch's change has reached the
      // invocation service's copy, so the run comes due after it whatever the machine's speed.
      const job = await jobOf(accepted.body.invocationId);
      const held = await holdRows(system.database.url, 'SELECT name FROM scheduler.scheduled_jobs WHERE name = $1 FOR KEY SHARE', [job]);
      try {
        expect(await schedulerJob(job)).toBe('SCHEDULED');
        const settings = `/v1/orgs/${project.orgId}/projects/${project.projectId}/api-settings`;
        expect((await http.patch(settings, { externalApiEnabled: false }, { bearer: project.ownerJwt })).status).toBe(200);
        await eventually('the switch to reach the invocation service', async () => {
          const [copy] = await sql('SELECT external_api_enabled FROM invocation.project_copies WHERE project_id = $1', [project.projectId]);
          return copy?.external_api_enabled === false ? true : undefined;
        });
      } finally {
        await held.release();
      }

      const rows = await eventually('the run to end', async () => {
        const found = await sql(`SELECT document FROM invocation.invocation_views WHERE id = $1 AND document->>'status' = 'FAILED'`, [accepted.body.invocationId]);
        return found[0];
      });
      expect(rows.document).toMatchObject({ status: 'FAILED', errorMessage: DISABLED, schedulerStatus: 'FIRED' });
      expect(callsFor('off-1')).toBe(0);
    });
  });

  describe('PATCH cancel and reschedule', () => {
    it('cancel: 200 with the full invocation, CANCELLED, completedAt set, durationMs null; it never executes', async () => {
      const { project, token } = await automation();
      const accepted = await triggerAsync(project, token, { payload: { orderId: 'cancel-1' }, delaySeconds: 1 });
      const cancelled = await patch(project, token, accepted.body.invocationId, { action: 'cancel' });
      expect(cancelled.status).toBe(200);
      expect(cancelled.body).toMatchObject({
        invocationId: accepted.body.invocationId,
        status: 'CANCELLED',
        schedulerStatus: 'CANCELLED',
        durationMs: null,
        startedAt: null,
        scheduledFor: accepted.body.scheduledFor,
      });
      expect(typeof cancelled.body.completedAt).toBe('string');
      expect(cancelled.body).toHaveProperty('requestPayload');
      expect(cancelled.body).toHaveProperty('callbackAttempts');
      // The spec's fields in the spec's order, then ours.
      expect(Object.keys(cancelled.body).slice(0, SPEC_INVOCATION_FIELDS.length)).toEqual([...SPEC_INVOCATION_FIELDS]);

      // The job is CANCELLED in the scheduler, which no claim takes: it can never fire.
      const job = await jobOf(accepted.body.invocationId);
      expect(await schedulerJob(job)).toBe('CANCELLED');
      expect(await firedEvents(job)).toBe(0);
      expect(await startsOf(accepted.body.invocationId)).toBe(0);
      expect((await read(project, token, accepted.body.invocationId)).body).toEqual(cancelled.body);
      expect(callsFor('cancel-1')).toBe(0);
    });

    it('409 Only scheduled invocations can be modified: a cancelled, a queued or a finished run', async () => {
      const { project, token } = await automation();
      const scheduled = await triggerAsync(project, token, { payload: { orderId: 'again-1' }, delaySeconds: 60 });
      expect((await patch(project, token, scheduled.body.invocationId, { action: 'cancel' })).status).toBe(200);
      for (const body of [{ action: 'cancel' }, { action: 'reschedule', delaySeconds: 5 }]) {
        const again = await patch(project, token, scheduled.body.invocationId, body);
        expect(again.status).toBe(409);
        expect(again.body).toEqual({ error: 'Only scheduled invocations can be modified' });
      }

      const immediate = await triggerAsync(project, token, { payload: { orderId: 'now-1' } });
      await waitForFinalInvocation(http, project.orgId, immediate.body.invocationId, token);
      const finished = await patch(project, token, immediate.body.invocationId, { action: 'cancel' });
      expect(finished.status).toBe(409);
      expect(finished.body).toEqual({ error: 'Only scheduled invocations can be modified' });
    });

    it('409 Only async invocations can be modified: a run from a sync endpoint', async () => {
      const { project, token } = await automation();
      const sync = await http.post<InvocationBody>(`/v1/orgs/${project.orgId}/automations/${project.projectId}/trigger`, { payload: { orderId: 'sync-1' } }, { bearer: token });
      expect(sync.status).toBe(200);
      const answer = await patch(project, token, sync.body.invocationId, { action: 'cancel' });
      expect(answer.status).toBe(409);
      expect(answer.body).toEqual({ error: 'Only async invocations can be modified' });
    });

    it('reschedule later: 200 with the new scheduledFor; the run starts at the new time, not the old', async () => {
      const { project, token } = await automation();
      // The move must land before the first time: a reschedule locks the job FOR UPDATE, as the
      // scheduler's claim does, so no held lock can keep one out but not the other. Four seconds
      // leave the request room on a loaded machine.
      const accepted = await triggerAsync(project, token, { payload: { orderId: 'later-1' }, delaySeconds: 4 });
      const moved = await patch(project, token, accepted.body.invocationId, { action: 'reschedule', delaySeconds: 6 });
      expect(moved.status).toBe(200);
      expect(moved.body.status).toBe('SCHEDULED');
      const newTime = Date.parse(moved.body.scheduledFor as string);
      expect(newTime).toBeGreaterThan(Date.parse(accepted.body.scheduledFor as string) + 1500);

      // The scheduler's job was moved before the answer: only the new time can fire it.
      const job = await jobOf(accepted.body.invocationId);
      const [row] = await sql('SELECT status, due_at FROM scheduler.scheduled_jobs WHERE name = $1', [job]);
      expect(row).toEqual({ status: 'SCHEDULED', due_at: new Date(newTime) });

      const done = await waitForFinalInvocation(http, project.orgId, accepted.body.invocationId, token, 10_000);
      expect(done.status).toBe('SUCCEEDED');
      // Started once, at the new time: not at the old one.
      expect(Date.parse(done.startedAt as string)).toBeGreaterThanOrEqual(newTime);
      expect(await startsOf(accepted.body.invocationId)).toBe(1);
      expect(await firedEvents(job)).toBe(1);
      expect(callsFor('later-1')).toBe(1);
    });

    it('reschedule sooner with runAt: the run starts at the new time', async () => {
      const { project, token } = await automation();
      const accepted = await triggerAsync(project, token, { payload: { orderId: 'sooner-1' }, delaySeconds: 3600 });
      const runAt = new Date(Date.now() + 800).toISOString();
      const moved = await patch(project, token, accepted.body.invocationId, { action: 'reschedule', runAt });
      expect(moved.status).toBe(200);
      expect(moved.body).toMatchObject({ status: 'SCHEDULED', scheduledFor: runAt });
      const done = await waitForFinalInvocation(http, project.orgId, accepted.body.invocationId, token, 10_000);
      expect(done.status).toBe('SUCCEEDED');
      // At the new time, not the old one an hour on (how late after it: `npm run bench:scheduling`).
      expect(Date.parse(done.startedAt as string)).toBeGreaterThanOrEqual(Date.parse(runAt));
    });

    it('a cancel that reaches the scheduler before it claims the job: 200 CANCELLED, the job never fires and the run never starts', async () => {
      const { project, token } = await automation();
      const runAt = Date.now() + 1500;
      const accepted = await triggerAsync(project, token, { payload: { orderId: 'race-cancelled' }, runAt: new Date(runAt).toISOString() });
      expect(accepted.body.status).toBe('SCHEDULED');
      const job = await jobOf(accepted.body.invocationId);

      // A lock the scheduler's claim (FOR UPDATE SKIP LOCKED) skips but its cancel (an UPDATE
      // of non-key columns) does not wait for: while it is held the job cannot fire, even past
      // its time, and the cancel comes first whatever the machine's speed.
      const held = await holdRows(system.database.url, 'SELECT name FROM scheduler.scheduled_jobs WHERE name = $1 FOR KEY SHARE', [job]);
      let answer;
      try {
        // Waits for the time to pass (no work is awaited): the job is due, and only the lock keeps it.
        await sleep(Math.max(0, runAt + 100 - Date.now()));
        expect(await schedulerJob(job)).toBe('SCHEDULED');
        answer = await patch(project, token, accepted.body.invocationId, { action: 'cancel' });
      } finally {
        await held.release();
      }
      expect(answer.status).toBe(200);
      expect(answer.body).toMatchObject({ invocationId: accepted.body.invocationId, status: 'CANCELLED', schedulerStatus: 'CANCELLED', startedAt: null });

      // The job is CANCELLED, which no claim takes: it never fires, so the run never starts.
      expect(await schedulerJob(job)).toBe('CANCELLED');
      expect(await firedEvents(job)).toBe(0);
      expect(await startsOf(accepted.body.invocationId)).toBe(0);
      expect((await read(project, token, accepted.body.invocationId)).body).toEqual(answer.body);
      expect(callsFor('race-cancelled')).toBe(0);
    });

    it('a cancel that reaches the scheduler after it claimed the job: 409 Invocation is no longer scheduled, and the run runs once', async () => {
      const { project, token } = await automation();
      const runAt = Date.now() + 1500;
      const accepted = await triggerAsync(project, token, { payload: { orderId: 'race-fired' }, runAt: new Date(runAt).toISOString() });
      expect(accepted.body.status).toBe('SCHEDULED');
      const job = await jobOf(accepted.body.invocationId);

      // The run's row held: the invocation service cannot move the run to RUNNING, so it is
      // still SCHEDULED there when the cancel arrives, whenever the fired job reaches it.
      const held = await holdRows(system.database.url, 'SELECT id FROM invocation.invocations WHERE id = $1 FOR UPDATE', [accepted.body.invocationId]);
      let answer;
      try {
        await eventually('the scheduler to claim the job', async () => ((await schedulerJob(job)) === 'FIRED' ? true : undefined));
        answer = await patch(project, token, accepted.body.invocationId, { action: 'cancel' });
        expect((await read(project, token, accepted.body.invocationId)).body.status).toBe('SCHEDULED');
      } finally {
        await held.release();
      }
      expect(answer.status).toBe(409);
      expect(answer.body).toEqual({ error: 'Invocation is no longer scheduled' });

      const done = await waitForFinalInvocation(http, project.orgId, accepted.body.invocationId, token, 10_000);
      expect(done).toMatchObject({ status: 'SUCCEEDED', schedulerStatus: 'FIRED' });
      expect(Date.parse(done.startedAt as string)).toBeGreaterThanOrEqual(runAt);
      expect(await firedEvents(job)).toBe(1);
      expect(await startsOf(accepted.body.invocationId)).toBe(1);
      expect(callsFor('race-fired')).toBe(1);
    });
  });

  describe('Wait nodes', () => {
    it('suspends the run (SUSPENDED) and the scheduler resumes it at its time', async () => {
      const { project, token } = await automation(waitingAutomation(1));
      const accepted = await triggerAsync(project, token, { payload: {} });
      expect(accepted.status).toBe(202);
      const suspended = await eventually('the run to suspend', async () => {
        const answer = await read(project, token, accepted.body.invocationId);
        return answer.body.status === 'SUSPENDED' ? answer.body : undefined;
      });
      expect(suspended.completedAt).toBeNull();
      const done = await waitForFinalInvocation(http, project.orgId, accepted.body.invocationId, token, 10_000);
      expect(done).toMatchObject({ status: 'SUCCEEDED', result: { waited: true } });
      expect(Date.parse(done.completedAt as string) - Date.parse(done.startedAt as string)).toBeGreaterThanOrEqual(1000);
      const types = await sql(`SELECT type FROM invocation.invocation_events WHERE invocation_id = $1 ORDER BY sequence`, [accepted.body.invocationId]);
      expect(types.map((row) => row.type)).toEqual(['InvocationQueued', 'InvocationStarted', 'InvocationSuspended', 'InvocationResumed', 'InvocationSucceeded']);
    });
  });
});
