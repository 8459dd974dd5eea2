import type { InvocationEvent, InvocationEventData, RequestInfo } from './invocation-event.js';
import { applyCallbackAttempt, applyInvocationEvent, projectInvocation, ProjectionError } from './invocation.projector.js';

const request: RequestInfo = {
  targetType: 'AUTOMATION',
  mode: 'ASYNC',
  triggerSource: 'WEBHOOK',
  environment: 'PRODUCTION',
  requestPayload: { payload: { orderId: 'o-1' } },
  enrollmentPolicy: 'EVERY_MATCH',
  onErrorPolicy: 'ABORT',
  startedByTokenId: 'tok-1',
  definitionVersion: 3,
  sessionId: null,
  maxAttempts: 2,
};

let sequence = 0;
function event(data: InvocationEventData, at: string): InvocationEvent {
  return { id: `e-${++sequence}`, invocationId: 'inv-1', orgId: 'org-1', projectId: 'prj-1', sequence, occurredAt: at, data };
}
const attempt = { steps: [{ nodeId: 'n1' }], trace: { runtime: 'runline-engine/1' }, durationMs: 5 };

describe('invocation projector', () => {
  it('starts a queued run with every field of the spec, nulls where nothing happened yet', () => {
    const document = projectInvocation([event({ type: 'InvocationQueued', request }, '2026-01-01T00:00:00.000Z')]);
    expect(document).toEqual({
      invocationId: 'inv-1',
      status: 'QUEUED',
      environment: 'PRODUCTION',
      triggerSource: 'WEBHOOK',
      mode: 'ASYNC',
      targetType: 'AUTOMATION',
      startedAt: null,
      completedAt: null,
      durationMs: null,
      errorMessage: null,
      requestPayload: { payload: { orderId: 'o-1' } },
      result: null,
      trace: null,
      steps: [],
      callbackAttempts: [],
      scheduledFor: null,
      schedulerStatus: null,
      schedulerJobName: null,
      pendingApproval: null,
      enrollmentPolicy: 'EVERY_MATCH',
      onErrorPolicy: 'ABORT',
      attempts: 0,
      maxAttempts: 2,
      definitionVersion: 3,
      createdAt: '2026-01-01T00:00:00.000Z',
      updatedAt: '2026-01-01T00:00:00.000Z',
    });
  });

  it('records the definition version in force when accepted, then the one each executed attempt ran (its trace says); a draft run has none', () => {
    const queued = event({ type: 'InvocationQueued', request }, '2026-01-01T00:00:00.000Z');
    expect(projectInvocation([queued])?.definitionVersion).toBe(3);
    // Published again between acceptance and execution: the attempt ran version 4.
    const ranNewer = projectInvocation([
      queued,
      event({ type: 'InvocationStarted', attempt: 1 }, '2026-01-01T00:00:01.000Z'),
      event({ type: 'InvocationSuspended', pendingApproval: null, resumeAt: '2026-01-01T00:01:00.000Z', steps: [], trace: { runtime: 'runline-engine/1', definitionVersion: 4 } }, '2026-01-01T00:00:02.000Z'),
    ]);
    expect(ranNewer).toMatchObject({ definitionVersion: 4, trace: { definitionVersion: 4 } });
    // An attempt whose trace names no version (it failed before running) keeps what was known.
    const unknown = applyInvocationEvent(ranNewer, event({ type: 'InvocationFailed', errorMessage: 'Run could not be executed: x', kind: 'RUN', attempt: 1, steps: [], trace: null, durationMs: 0 }, '2026-01-01T00:00:03.000Z'));
    expect(unknown.definitionVersion).toBe(4);
    const draft = projectInvocation([event({ type: 'InvocationQueued', request: { ...request, environment: 'TEST', definitionVersion: 0 } }, '2026-01-01T00:00:00.000Z')]);
    expect(draft?.definitionVersion).toBeNull();
  });

  it('follows a retried run to success: duration from the first start, error cleared', () => {
    const document = projectInvocation([
      event({ type: 'InvocationQueued', request }, '2026-01-01T00:00:00.000Z'),
      event({ type: 'InvocationStarted', attempt: 1 }, '2026-01-01T00:00:01.000Z'),
      event({ type: 'InvocationRetryScheduled', failedAttempt: 1, errorMessage: 'boom', retryAt: '2026-01-01T00:00:03.000Z', steps: [], trace: null }, '2026-01-01T00:00:02.000Z'),
      event({ type: 'InvocationStarted', attempt: 2 }, '2026-01-01T00:00:03.000Z'),
      event({ type: 'InvocationSucceeded', result: { ok: true }, ...attempt }, '2026-01-01T00:00:04.500Z'),
    ]);
    expect(document).toMatchObject({
      status: 'SUCCEEDED',
      attempts: 2,
      startedAt: '2026-01-01T00:00:01.000Z',
      completedAt: '2026-01-01T00:00:04.500Z',
      durationMs: 3500,
      errorMessage: null,
      result: { ok: true },
      steps: attempt.steps,
      trace: attempt.trace,
      updatedAt: '2026-01-01T00:00:04.500Z',
    });
  });

  it('records failures, timeouts and suspensions with their details', () => {
    const queued = event({ type: 'InvocationQueued', request }, '2026-01-01T00:00:00.000Z');
    const started = event({ type: 'InvocationStarted', attempt: 1 }, '2026-01-01T00:00:01.000Z');
    const failed = projectInvocation([queued, started, event({ type: 'InvocationFailed', errorMessage: 'node "n1": boom', kind: 'RUN', attempt: 1, ...attempt }, '2026-01-01T00:00:02.000Z')]);
    expect(failed).toMatchObject({ status: 'FAILED', errorMessage: 'node "n1": boom', durationMs: 1000, result: null });
    const timedOut = projectInvocation([queued, started, event({ type: 'InvocationTimedOut', errorMessage: 'Time limit', ...attempt }, '2026-01-01T00:00:02.000Z')]);
    expect(timedOut).toMatchObject({ status: 'TIMEOUT', errorMessage: 'Time limit' });
    const pendingApproval = { nodeId: 'a', title: 'Approve?', requestedAt: '2026-01-01T00:00:02.000Z' };
    const suspended = projectInvocation([queued, started, event({ type: 'InvocationSuspended', pendingApproval, resumeAt: null, steps: [], trace: null }, '2026-01-01T00:00:02.000Z')]);
    expect(suspended).toMatchObject({ status: 'SUSPENDED', pendingApproval, completedAt: null });
  });

  it('starts a history with a failed trigger check: completed, never started', () => {
    const document = projectInvocation([
      event({ type: 'InvocationFailed', errorMessage: 'Payload is missing required keys: amount', kind: 'TRIGGER_CHECK', attempt: 0, request, steps: [], trace: null, durationMs: 0 }, '2026-01-01T00:00:00.000Z'),
    ]);
    expect(document).toMatchObject({ status: 'FAILED', startedAt: null, durationMs: null, completedAt: '2026-01-01T00:00:00.000Z' });
  });

  it('refuses a history that does not begin with the request', () => {
    expect(() => applyInvocationEvent(null, event({ type: 'InvocationStarted', attempt: 1 }, '2026-01-01T00:00:00.000Z'))).toThrow(ProjectionError);
  });

  it('gives the same document whether folded at once or event by event (rebuildable)', () => {
    const events = [
      event({ type: 'InvocationQueued', request }, '2026-01-01T00:00:00.000Z'),
      event({ type: 'InvocationStarted', attempt: 1 }, '2026-01-01T00:00:01.000Z'),
      event({ type: 'InvocationSucceeded', result: 1, ...attempt }, '2026-01-01T00:00:02.000Z'),
    ];
    let incremental = null;
    for (const e of events) incremental = applyInvocationEvent(JSON.parse(JSON.stringify(incremental)), e);
    expect(incremental).toEqual(projectInvocation(events));
  });

  describe('scheduled runs', () => {
    const scheduled = (at: string) =>
      event({ type: 'InvocationScheduled', request: { ...request, triggerSource: 'SCHEDULE' }, scheduledFor: '2026-01-01T01:00:00.000Z', schedulerJobName: 'run-inv-1' }, at);

    it('shows a scheduled run as SCHEDULED with its time and job, not started', () => {
      const document = projectInvocation([scheduled('2026-01-01T00:00:00.000Z')]);
      expect(document).toMatchObject({
        status: 'SCHEDULED',
        triggerSource: 'SCHEDULE',
        scheduledFor: '2026-01-01T01:00:00.000Z',
        schedulerJobName: 'run-inv-1',
        schedulerStatus: 'SCHEDULED',
        startedAt: null,
        completedAt: null,
      });
    });

    it('moves scheduledFor on a reschedule and keeps it SCHEDULED', () => {
      const document = projectInvocation([
        scheduled('2026-01-01T00:00:00.000Z'),
        event({ type: 'InvocationRescheduled', scheduledFor: '2026-01-02T00:00:00.000Z' }, '2026-01-01T00:00:01.000Z'),
      ]);
      expect(document).toMatchObject({ status: 'SCHEDULED', scheduledFor: '2026-01-02T00:00:00.000Z', updatedAt: '2026-01-01T00:00:01.000Z' });
    });

    it('ends a cancelled run CANCELLED with completedAt set and durationMs null', () => {
      const document = projectInvocation([scheduled('2026-01-01T00:00:00.000Z'), event({ type: 'InvocationCancelled' }, '2026-01-01T00:00:02.000Z')]);
      expect(document).toMatchObject({ status: 'CANCELLED', schedulerStatus: 'CANCELLED', completedAt: '2026-01-01T00:00:02.000Z', durationMs: null, startedAt: null });
    });

    it('marks the job FIRED when the run starts, and finishes like any async run', () => {
      const document = projectInvocation([
        scheduled('2026-01-01T00:00:00.000Z'),
        event({ type: 'InvocationStarted', attempt: 1 }, '2026-01-01T01:00:00.002Z'),
        event({ type: 'InvocationSucceeded', result: { ok: true }, ...attempt }, '2026-01-01T01:00:00.010Z'),
      ]);
      expect(document).toMatchObject({
        status: 'SUCCEEDED',
        schedulerStatus: 'FIRED',
        scheduledFor: '2026-01-01T01:00:00.000Z',
        startedAt: '2026-01-01T01:00:00.002Z',
        durationMs: 8,
      });
    });

    it('marks the job FIRED when the run fails as it comes up (external API off)', () => {
      const document = projectInvocation([
        scheduled('2026-01-01T00:00:00.000Z'),
        event(
          { type: 'InvocationFailed', errorMessage: 'External API access is disabled for this project', kind: 'EXTERNAL_API_DISABLED', attempt: 0, steps: [], trace: null, durationMs: 0 },
          '2026-01-01T01:00:00.001Z',
        ),
      ]);
      expect(document).toMatchObject({ status: 'FAILED', schedulerStatus: 'FIRED', errorMessage: 'External API access is disabled for this project' });
    });
  });

  it('resumes a suspended run: RUNNING again, startedAt kept', () => {
    const document = projectInvocation([
      event({ type: 'InvocationQueued', request }, '2026-01-01T00:00:00.000Z'),
      event({ type: 'InvocationStarted', attempt: 1 }, '2026-01-01T00:00:01.000Z'),
      event({ type: 'InvocationSuspended', pendingApproval: null, resumeAt: '2026-01-01T00:01:00.000Z', steps: [], trace: null }, '2026-01-01T00:00:02.000Z'),
      event({ type: 'InvocationResumed', attempt: 1 }, '2026-01-01T00:01:00.001Z'),
    ]);
    expect(document).toMatchObject({ status: 'RUNNING', startedAt: '2026-01-01T00:00:01.000Z', attempts: 1 });
  });

  describe('an approval decided', () => {
    const pending = { nodeId: 'gate', title: 'Go?', requestedAt: '2026-01-01T00:00:02.000Z' };
    const steps = [
      { nodeId: 'first', type: 'set', status: 'SUCCEEDED' },
      { nodeId: 'gate', type: 'approval', status: 'SUSPENDED' },
    ];
    const decided = {
      type: 'InvocationApprovalDecided' as const,
      nodeId: 'gate',
      decision: 'approve' as const,
      decidedBy: 'user-1',
      decidedAt: '2026-01-01T00:05:00.000Z',
      comment: 'looks right',
    };
    const history = [
      event({ type: 'InvocationQueued', request }, '2026-01-01T00:00:00.000Z'),
      event({ type: 'InvocationStarted', attempt: 1 }, '2026-01-01T00:00:01.000Z'),
      event({ type: 'InvocationSuspended', pendingApproval: pending, resumeAt: null, steps, trace: null }, '2026-01-01T00:00:02.000Z'),
    ];

    it('clears pendingApproval and puts the decision on the approval step; the run stays SUSPENDED until it resumes', () => {
      const document = projectInvocation([...history, event(decided, '2026-01-01T00:05:00.000Z')]);
      expect(document).toMatchObject({
        status: 'SUSPENDED',
        pendingApproval: null,
        updatedAt: '2026-01-01T00:05:00.000Z',
        steps: [
          { nodeId: 'first', type: 'set', status: 'SUCCEEDED' },
          {
            nodeId: 'gate',
            type: 'approval',
            status: 'SUSPENDED',
            approval: { decision: 'approve', decidedBy: 'user-1', decidedAt: '2026-01-01T00:05:00.000Z', comment: 'looks right' },
          },
        ],
      });
      expect((document?.steps[0] as Record<string, unknown>).approval).toBeUndefined();
    });

    it('on a node visited before (a loop), goes on the visit still waiting, not the earlier decided one', () => {
      const earlier = { nodeId: 'gate', type: 'approval', status: 'SUCCEEDED', approval: { decision: 'approve', decidedBy: 'user-0', decidedAt: '2026-01-01T00:00:00.500Z', comment: null } };
      const looped = [earlier, ...steps];
      const document = projectInvocation([
        history[0]!,
        history[1]!,
        event({ type: 'InvocationSuspended', pendingApproval: pending, resumeAt: null, steps: looped, trace: null }, '2026-01-01T00:00:02.000Z'),
        event({ ...decided, decision: 'reject', comment: null }, '2026-01-01T00:05:00.000Z'),
      ]);
      expect(document?.steps).toEqual([
        earlier,
        steps[0],
        { ...steps[1], approval: { decision: 'reject', decidedBy: 'user-1', decidedAt: '2026-01-01T00:05:00.000Z', comment: null } },
      ]);
    });
  });
});

describe('callback attempts in the read model', () => {
  const entry = (attempt: number, at: string, statusCode: number | null) => ({
    webhookId: 'd-1',
    attempt,
    attemptedAt: at,
    durationMs: 3,
    outcome: statusCode === 200 ? 'ACKNOWLEDGED' : statusCode === null ? 'TIMEOUT' : 'HTTP_ERROR',
    statusCode,
    error: statusCode === 200 ? null : 'receiver answered 500',
  });
  const finished = () =>
    projectInvocation([
      event({ type: 'InvocationQueued', request }, '2026-01-01T00:00:00.000Z'),
      event({ type: 'InvocationStarted', attempt: 1 }, '2026-01-01T00:00:01.000Z'),
      event({ type: 'InvocationSucceeded', result: { ok: true }, ...attempt }, '2026-01-01T00:00:02.000Z'),
    ])!;

  it('adds each attempt once, ordered by attempt whatever the arrival order, and bumps updatedAt', () => {
    let document = finished();
    document = applyCallbackAttempt(document, entry(2, '2026-01-01T00:00:03.000Z', 500));
    document = applyCallbackAttempt(document, entry(1, '2026-01-01T00:00:02.500Z', 500));
    document = applyCallbackAttempt(document, entry(2, '2026-01-01T00:00:03.000Z', 500));
    document = applyCallbackAttempt(document, entry(3, '2026-01-01T00:00:04.100Z', 200));
    expect(document.callbackAttempts).toEqual([
      entry(1, '2026-01-01T00:00:02.500Z', 500),
      entry(2, '2026-01-01T00:00:03.000Z', 500),
      entry(3, '2026-01-01T00:00:04.100Z', 200),
    ]);
    expect(document.updatedAt).toBe('2026-01-01T00:00:04.100Z');
    expect(document.status).toBe('SUCCEEDED');
  });
});
