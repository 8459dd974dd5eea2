import { gatewayService } from '@runline/gateway-service';
import { invocationService } from '@runline/invocation-service';
import { schedulerService } from '@runline/scheduler-service';
import { ApprovalDecision, EVENT_TYPES, timestampDate } from '@runline/contracts';
import { consoleJwt, HttpClient, startTestSystem, type TestSystem } from '@runline/testing';
import { createPublishedProject, issueToken, type ProjectFixture } from './gateway-fixtures.js';
import {
  eventually,
  gate,
  InvocationEventRecorder,
  payloadOf,
  startLocalServer,
  waitForFinalInvocation,
  type InvocationBody,
  type LocalServer,
} from './support/lifecycle-support.js';

const NO_SUCH_UUID = '00000000-0000-4000-8000-000000000000';
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
/** How long a decider's request waits for a run slot here (the system runs one run at a time). */
const SLOT_WAIT_MS = 600;

/** An automation that asks for approval before it pays; rejected, it goes to `refused` when `onReject` is set. */
function approvalAutomation(withOnReject: boolean): object {
  return {
    schemaVersion: 1,
    workflow: {
      trigger: { externalEnabled: true, key: 'external_event', expectedPayload: { orderId: '' } },
      start: 'gate',
      nodes: {
        gate: { type: 'approval', title: 'Refund order {{ payload.orderId }}?', next: 'pay', ...(withOnReject ? { onReject: 'refused' } : {}) },
        pay: { type: 'return', value: "{ 'paid': payload.orderId }" },
        ...(withOnReject ? { refused: { type: 'return', value: "{ 'refused': payload.orderId }" } } : {}),
      },
    },
  };
}

/** An automation that waits an hour: SUSPENDED at a Wait node, not at an approval. */
const waitingAutomation = {
  schemaVersion: 1,
  workflow: {
    trigger: { externalEnabled: true, key: 'external_event', expectedPayload: { orderId: '' } },
    start: 'pause',
    nodes: { pause: { type: 'wait', seconds: 3600, next: 'done' }, done: { type: 'return', value: "'done'" } },
  },
};

/** An automation whose only node calls `url` (held open by the test) and returns. */
function slowAutomation(url: string): object {
  return {
    schemaVersion: 1,
    workflow: {
      trigger: { externalEnabled: true, key: 'external_event', expectedPayload: { orderId: '' } },
      start: 'call',
      nodes: {
        call: { type: 'http', method: 'GET', url: `${url}/slow`, saveAs: 'reply', next: 'done' },
        done: { type: 'return', value: "'slow done'" },
      },
    },
  };
}

interface Org {
  project: ProjectFixture;
  token: string;
  owner: string;
  editor: string;
  viewer: string;
  editorId: string;
}

let orgs = 0;

/**
 * Approve and reject (PATCH /external-invocations/{id} with a console JWT, DESIGN section 5),
 * the console's run page (GET with a console JWT) and the console's cancel and reschedule, on
 * the real system with the scheduler. One async run at a time, so a slow run can hold the only
 * run slot and a decision that cannot resume its run at once (502) happens for real.
 */
describe('approvals and the console run page', () => {
  let system: TestSystem;
  let http: HttpClient;
  let recorder: InvocationEventRecorder;
  const servers: LocalServer[] = [];

  beforeAll(async () => {
    system = await startTestSystem([gatewayService, invocationService, schedulerService], {
      environment: {
        OUTBOUND_ALLOWED_CIDRS: '127.0.0.0/8',
        RUN_CONCURRENCY: '1',
        APPROVAL_SLOT_WAIT_MS: String(SLOT_WAIT_MS),
        ACCESS_CACHE_TTL_MS: '0',
      },
    });
    http = new HttpClient(system.url('gateway'));
    recorder = await InvocationEventRecorder.start(system.busPrefix);
  });
  afterAll(async () => {
    await recorder?.stop();
    await system?.stop();
    for (const server of servers) await server.close();
  });
  afterEach(() => {
    expect(recorder.decodeErrors).toEqual([]);
  });

  /** A fresh organization with an EDITOR and a VIEWER, an automation project with `definition` and a token that may trigger it. */
  async function org(definition: object): Promise<Org> {
    const project = await createPublishedProject(http, 'AUTOMATION', definition);
    const suffix = `${process.pid}-${++orgs}`;
    const editorId = `editor-${suffix}`;
    for (const [userId, role] of [
      [editorId, 'EDITOR'],
      [`viewer-${suffix}`, 'VIEWER'],
    ]) {
      const added = await http.post(`/v1/orgs/${project.orgId}/members`, { userId, role }, { bearer: project.ownerJwt });
      if (added.status !== 201) throw new Error(`member: ${added.status} ${JSON.stringify(added.body)}`);
    }
    const { token } = await issueToken(http, project, ['automation:trigger']);
    return { project, token, owner: project.ownerJwt, editor: consoleJwt(editorId), viewer: consoleJwt(`viewer-${suffix}`), editorId };
  }

  const runPath = (o: Org, id: string) => `/v1/orgs/${o.project.orgId}/external-invocations/${id}`;
  const patch = (o: Org, id: string, bearer: string, body: unknown) => http.patch<InvocationBody>(runPath(o, id), body, { bearer });
  const read = (o: Org, id: string, bearer: string) => http.get<InvocationBody>(runPath(o, id), { bearer });

  async function trigger(o: Org, payload: Record<string, unknown>, extra: Record<string, unknown> = {}): Promise<string> {
    const accepted = await http.post<InvocationBody>(
      `/v1/orgs/${o.project.orgId}/automations/${o.project.projectId}/trigger-async`,
      { event: 'refund.requested', payload, ...extra },
      { bearer: o.token },
    );
    if (accepted.status !== 202) throw new Error(`trigger: ${accepted.status} ${JSON.stringify(accepted.body)}`);
    return accepted.body.invocationId;
  }

  /** Triggers a run and waits until it is SUSPENDED (at its approval, or its Wait). */
  async function suspendedRun(o: Org, payload: Record<string, unknown> = { orderId: 'o-1' }): Promise<string> {
    const id = await trigger(o, payload);
    await eventually(`run ${id} SUSPENDED`, async () => ((await read(o, id, o.owner)).body.status === 'SUSPENDED' ? true : undefined));
    return id;
  }

  const gateStep = (run: InvocationBody) => (run.steps as Array<Record<string, unknown>>).find((step) => step.nodeId === 'gate');

  describe('approve', () => {
    it('an EDITOR approves: 200 with the run resumed, it continues at next and SUCCEEDS; the step says who, when and why; pendingApproval is null', async () => {
      const o = await org(approvalAutomation(true));
      const id = await suspendedRun(o, { orderId: 'o-42' });
      const before = await read(o, id, o.viewer);
      expect(before.body).toMatchObject({ status: 'SUSPENDED', pendingApproval: { nodeId: 'gate', title: 'Refund order o-42?' } });

      const sentAt = Date.now();
      const approved = await patch(o, id, o.editor, { action: 'approve', comment: 'Customer verified' });
      expect(approved.status).toBe(200);
      expect(['RUNNING', 'SUCCEEDED']).toContain(approved.body.status);
      expect(approved.body).toMatchObject({ invocationId: id, pendingApproval: null });

      const done = await waitForFinalInvocation(http, o.project.orgId, id, o.editor);
      expect(done).toMatchObject({ status: 'SUCCEEDED', result: { paid: 'o-42' }, pendingApproval: null, errorMessage: null });
      expect((done.steps as Array<Record<string, unknown>>).map((step) => [step.nodeId, step.status])).toEqual([
        ['gate', 'SUCCEEDED'],
        ['pay', 'SUCCEEDED'],
      ]);
      const decision = gateStep(done)?.approval as Record<string, unknown>;
      expect(decision).toEqual({ decision: 'approve', decidedBy: o.editorId, decidedAt: expect.stringMatching(ISO), comment: 'Customer verified' });
      expect(Math.abs(Date.parse(decision.decidedAt as string) - sentAt)).toBeLessThan(10_000);

      // Internal subscribers see the decision on invocation.evt.*, before the run resumed.
      const event = await recorder.waitFor(id, EVENT_TYPES.INVOCATION_APPROVAL_DECIDED);
      const payload = payloadOf(event, EVENT_TYPES.INVOCATION_APPROVAL_DECIDED);
      expect(payload).toMatchObject({ nodeId: 'gate', decision: ApprovalDecision.APPROVE, decidedBy: o.editorId, comment: 'Customer verified' });
      expect(timestampDate(payload.decidedAt!).toISOString()).toBe(decision.decidedAt);
      await recorder.waitFor(id, EVENT_TYPES.INVOCATION_SUCCEEDED);
      const types = recorder.typesOf(id);
      expect(types.slice(types.indexOf(EVENT_TYPES.INVOCATION_SUSPENDED))).toEqual([
        EVENT_TYPES.INVOCATION_SUSPENDED,
        EVENT_TYPES.INVOCATION_APPROVAL_DECIDED,
        EVENT_TYPES.INVOCATION_RESUMED,
        EVENT_TYPES.INVOCATION_SUCCEEDED,
      ]);
    });

    it('the OWNER approves without a comment: the step records a null comment', async () => {
      const o = await org(approvalAutomation(true));
      const id = await suspendedRun(o);
      expect((await patch(o, id, o.owner, { action: 'approve' })).status).toBe(200);
      const done = await waitForFinalInvocation(http, o.project.orgId, id, o.owner);
      expect(done.status).toBe('SUCCEEDED');
      expect(gateStep(done)?.approval).toMatchObject({ decision: 'approve', decidedBy: expect.stringMatching(/^owner-/), comment: null });
    });
  });

  describe('reject', () => {
    it('with onReject: 200, the run continues there and SUCCEEDS with its result', async () => {
      const o = await org(approvalAutomation(true));
      const id = await suspendedRun(o, { orderId: 'o-7' });
      const rejected = await patch(o, id, o.editor, { action: 'reject', comment: 'Not eligible' });
      expect(rejected.status).toBe(200);
      expect(rejected.body.pendingApproval).toBeNull();
      const done = await waitForFinalInvocation(http, o.project.orgId, id, o.editor);
      expect(done).toMatchObject({ status: 'SUCCEEDED', result: { refused: 'o-7' } });
      expect((done.steps as Array<Record<string, unknown>>).map((step) => step.nodeId)).toEqual(['gate', 'refused']);
      expect(gateStep(done)?.approval).toMatchObject({ decision: 'reject', decidedBy: o.editorId, comment: 'Not eligible' });
    });

    it('without onReject: 200, then the run FAILS "Rejected at node "gate""', async () => {
      const o = await org(approvalAutomation(false));
      const id = await suspendedRun(o);
      expect((await patch(o, id, o.editor, { action: 'reject' })).status).toBe(200);
      const done = await waitForFinalInvocation(http, o.project.orgId, id, o.editor);
      expect(done).toMatchObject({ status: 'FAILED', errorMessage: 'Rejected at node "gate"', pendingApproval: null });
      expect(gateStep(done)).toMatchObject({ status: 'FAILED', error: 'Rejected at node "gate"', approval: { decision: 'reject', decidedBy: o.editorId } });
    });
  });

  describe('who may decide', () => {
    let o: Org;
    let id: string;
    beforeAll(async () => {
      o = await org(approvalAutomation(true));
      id = await suspendedRun(o);
    });

    it.each(['approve', 'reject'])('%s by a VIEWER: 403 Unauthorized, also for an id that does not exist', async (action) => {
      expect(await patch(o, id, o.viewer, { action })).toMatchObject({ status: 403, body: { error: 'Unauthorized' } });
      expect(await patch(o, NO_SUCH_UUID, o.viewer, { action })).toMatchObject({ status: 403, body: { error: 'Unauthorized' } });
    });

    it.each(['approve', 'reject'])('%s with an API token, even the one that started the run: 403 Unauthorized', async (action) => {
      expect(await patch(o, id, o.token, { action })).toMatchObject({ status: 403, body: { error: 'Unauthorized' } });
    });

    it('a signed-in user who is not a member: 404 for the run, as for an id that does not exist', async () => {
      const stranger = consoleJwt(`stranger-${process.pid}`);
      for (const target of [id, NO_SUCH_UUID]) {
        expect(await patch(o, target, stranger, { action: 'approve' })).toMatchObject({ status: 404, body: { error: 'Organization not found' } });
        expect(await read(o, target, stranger)).toMatchObject({ status: 404, body: { error: 'Organization not found' } });
      }
    });

    it("a member of another organization asking for this run under their own: 404 Invocation not found", async () => {
      const other = await org(approvalAutomation(true));
      const underTheirs = `/v1/orgs/${other.project.orgId}/external-invocations/${id}`;
      expect(await http.patch(underTheirs, { action: 'approve' }, { bearer: other.owner })).toMatchObject({ status: 404, body: { error: 'Invocation not found' } });
      expect(await http.get(underTheirs, { bearer: other.owner })).toMatchObject({ status: 404, body: { error: 'Invocation not found' } });
      expect(await patch(o, NO_SUCH_UUID, o.editor, { action: 'approve' })).toMatchObject({ status: 404, body: { error: 'Invocation not found' } });
    });

    it('400 for a bad comment or another field; an expired console JWT gets 401; nothing was decided', async () => {
      const cases: Array<[unknown, string]> = [
        [{ action: 'approve', comment: 5 }, 'comment must be a string of at most 2000 characters'],
        [{ action: 'approve', comment: 'x'.repeat(2001) }, 'comment must be a string of at most 2000 characters'],
        [{ action: 'reject', runAt: '2040-01-01T00:00:00Z' }, 'approve and reject take no fields other than action and comment'],
        [{ action: 'nod' }, 'action must be one of: cancel, reschedule, approve, reject'],
      ];
      for (const [body, error] of cases) {
        const answer = await patch(o, id, o.editor, body);
        expect({ body, status: answer.status, answer: answer.body }).toEqual({ body, status: 400, answer: { error } });
      }
      const expired = consoleJwt(o.editorId, { expiresIn: -10 });
      expect(await patch(o, id, expired, { action: 'approve' })).toMatchObject({ status: 401, body: { error: 'Invalid or expired console token' } });
      expect((await read(o, id, o.viewer)).body).toMatchObject({ status: 'SUSPENDED', pendingApproval: { nodeId: 'gate' } });
    });
  });

  describe('409 Invocation is not waiting for approval', () => {
    it('for a SUCCEEDED run, a run SUSPENDED at a Wait node, and a run whose approval was decided already', async () => {
      const waiting = await org(waitingAutomation);
      const atWait = await suspendedRun(waiting);
      expect(await patch(waiting, atWait, waiting.editor, { action: 'approve' })).toMatchObject({
        status: 409,
        body: { error: 'Invocation is not waiting for approval' },
      });
      expect((await read(waiting, atWait, waiting.viewer)).body.status).toBe('SUSPENDED');

      const o = await org(approvalAutomation(true));
      const id = await suspendedRun(o);
      expect((await patch(o, id, o.editor, { action: 'approve' })).status).toBe(200);
      for (const action of ['approve', 'reject']) {
        expect(await patch(o, id, o.owner, { action })).toMatchObject({ status: 409, body: { error: 'Invocation is not waiting for approval' } });
      }
      const done = await waitForFinalInvocation(http, o.project.orgId, id, o.owner);
      expect(done.status).toBe('SUCCEEDED');
      expect(await patch(o, id, o.owner, { action: 'reject' })).toMatchObject({ status: 409, body: { error: 'Invocation is not waiting for approval' } });
      // The later attempts changed nothing: still the first decision.
      expect(gateStep(await waitForFinalInvocation(http, o.project.orgId, id, o.owner))?.approval).toMatchObject({ decision: 'approve', decidedBy: o.editorId });
    });

    it('two concurrent decisions: exactly one is recorded (200), the other gets 409', async () => {
      const o = await org(approvalAutomation(true));
      const id = await suspendedRun(o);
      const [first, second] = await Promise.all([
        patch(o, id, o.editor, { action: 'approve', comment: 'editor' }),
        patch(o, id, o.owner, { action: 'reject', comment: 'owner' }),
      ]);
      const answers = [first, second].map((answer) => ({ status: answer.status, error: answer.status === 200 ? undefined : answer.body.error }));
      expect(answers.map((answer) => answer.status).sort()).toEqual([200, 409]);
      expect(answers.find((answer) => answer.status === 409)?.error).toBe('Invocation is not waiting for approval');

      const winner = first.status === 200 ? { decision: 'approve', comment: 'editor' } : { decision: 'reject', comment: 'owner' };
      const done = await waitForFinalInvocation(http, o.project.orgId, id, o.owner);
      expect(done).toMatchObject({ status: 'SUCCEEDED', result: winner.decision === 'approve' ? { paid: 'o-1' } : { refused: 'o-1' } });
      expect(gateStep(done)?.approval).toMatchObject(winner);
      expect(recorder.typesOf(id).filter((type) => type === EVENT_TYPES.INVOCATION_APPROVAL_DECIDED)).toHaveLength(1);
    });
  });

  describe('502 Failed to resume the automation after recording the decision', () => {
    it('when no run slot frees in time: 502, the decision stands (GET shows it), and the run resumes by itself once a slot is free', async () => {
      const o = await org(approvalAutomation(true));
      const id = await suspendedRun(o, { orderId: 'o-502' });

      // The only run slot, held by a run whose http call the endpoint answers only when released.
      const release = gate();
      const endpoint = await startLocalServer(async () => {
        await release.opened;
        return { status: 200, body: { ok: true } };
      });
      servers.push(endpoint);
      const slow = await org(slowAutomation(endpoint.url));
      const slowId = await trigger(slow, { orderId: 's-1' });
      await eventually('the slow run holding the slot', async () => (endpoint.calls.length > 0 ? true : undefined));

      const started = Date.now();
      const answer = await patch(o, id, o.editor, { action: 'approve', comment: 'while busy' });
      expect(answer).toMatchObject({ status: 502, body: { error: 'Failed to resume the automation after recording the decision' } });
      expect(Date.now() - started).toBeGreaterThanOrEqual(SLOT_WAIT_MS - 50);

      const recorded = await read(o, id, o.viewer);
      expect(recorded.body).toMatchObject({ status: 'SUSPENDED', pendingApproval: null });
      expect(gateStep(recorded.body)).toMatchObject({
        status: 'SUSPENDED',
        approval: { decision: 'approve', decidedBy: o.editorId, decidedAt: expect.stringMatching(ISO), comment: 'while busy' },
      });
      // Decided: a second decision is refused, whatever it says.
      expect(await patch(o, id, o.owner, { action: 'reject' })).toMatchObject({ status: 409, body: { error: 'Invocation is not waiting for approval' } });

      release.open();
      expect((await waitForFinalInvocation(http, slow.project.orgId, slowId, slow.owner)).status).toBe('SUCCEEDED');
      const done = await waitForFinalInvocation(http, o.project.orgId, id, o.viewer);
      expect(done).toMatchObject({ status: 'SUCCEEDED', result: { paid: 'o-502' }, pendingApproval: null });
      expect(gateStep(done)).toMatchObject({ status: 'SUCCEEDED', approval: { decision: 'approve', comment: 'while busy' } });
    });
  });

  describe('the console run page: GET with a console JWT', () => {
    it('any member (a VIEWER too) reads any run of the organization, redacted as for the token; the token that started it reads it the same', async () => {
      const o = await org(approvalAutomation(true));
      const id = await suspendedRun(o, { orderId: 'o-9', password: 'hunter2', apiKey: 'sk-live-123' });
      const asViewer = await read(o, id, o.viewer);
      expect(asViewer.status).toBe(200);
      expect(asViewer.body).toMatchObject({
        invocationId: id,
        status: 'SUSPENDED',
        requestPayload: { payload: { orderId: 'o-9', password: '[REDACTED]', apiKey: '[REDACTED]' } },
        pendingApproval: { nodeId: 'gate', title: 'Refund order o-9?', requestedAt: expect.stringMatching(ISO) },
      });
      expect(JSON.stringify(asViewer.body)).not.toMatch(/hunter2|sk-live-123/);
      const asToken = await read(o, id, o.token);
      expect({ status: asToken.status, body: asToken.body }).toEqual({ status: 200, body: asViewer.body });
    });

    it('a malformed or unknown API token still gets the token answers', async () => {
      const o = await org(approvalAutomation(true));
      const id = await suspendedRun(o);
      expect(await read(o, id, 'not-a-token')).toMatchObject({ status: 401, body: { error: 'Invalid API token' } });
      expect(await patch(o, id, 'not-a-token', { action: 'approve' })).toMatchObject({ status: 401, body: { error: 'Invalid API token' } });
    });
  });

  describe('cancel and reschedule from the console', () => {
    it('a member with edit access cancels or moves a scheduled run with the token route’s rules and messages; a VIEWER gets 403 Unauthorized', async () => {
      const o = await org(approvalAutomation(true));
      const id = await trigger(o, { orderId: 'o-s' }, { delaySeconds: 3600 });
      expect(await patch(o, id, o.viewer, { action: 'cancel' })).toMatchObject({ status: 403, body: { error: 'Unauthorized' } });
      expect(await patch(o, id, o.editor, { action: 'cancel', delaySeconds: 5 })).toMatchObject({ status: 400, body: { error: 'cancel takes no fields other than action' } });

      const moved = await patch(o, id, o.editor, { action: 'reschedule', delaySeconds: 7200 });
      expect(moved).toMatchObject({ status: 200, body: { invocationId: id, status: 'SCHEDULED' } });
      expect(Date.parse(moved.body.scheduledFor as string)).toBeGreaterThan(Date.now() + 7_000_000);

      expect(await patch(o, id, o.owner, { action: 'cancel' })).toMatchObject({ status: 200, body: { invocationId: id, status: 'CANCELLED' } });
      expect(await patch(o, id, o.editor, { action: 'cancel' })).toMatchObject({ status: 409, body: { error: 'Only scheduled invocations can be modified' } });
    });
  });
});
