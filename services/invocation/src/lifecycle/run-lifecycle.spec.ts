import { decodeEnvelope, EVENT_TYPES, JobKind, ModifyOutcome, timestampDate, unpackPayloadAs } from '@runline/contracts';
import { ENGINE_RUNTIME, type CompiledDefinition, type RunOutcome } from '@runline/engine';
import { SecretBox } from '@runline/runtime';
import { TEST_SECRETS_KEY } from '@runline/testing';
import type { InvocationEventData, RequestInfo } from './invocation-event.js';
import { grantOf, quotaBound, quotaGroupsOf, refundsOf, scheduledStartVerdict, type QuotaPlan } from './monthly-quota.js';
import { callbackOnEnd } from './run-callback.js';
import { endingOf, INTERRUPTED_MESSAGE, interruptedEnding, skippedEnding, type SuspendedState } from './run-endings.js';
import { historiesOf, nextEvents, foldEvents, outgoingOf, withHistory } from './run-history.js';
import {
  cancelled,
  claimedResume,
  claimedStart,
  endedFirstRecordOf,
  endsInFirstRecord,
  firstRecordOf,
  modifyBlockerOf,
  notScheduledOutcome,
  PROJECT_DELETED_MESSAGE,
  projectRefusalOf,
  QUOTA_REFUSAL,
  rechecksQuota,
  recordsOnceEnded,
  refusedStart,
  rescheduled,
} from './run-lifecycle.js';
import type { RunPlan } from './run-plan.js';

const secrets = new SecretBox(TEST_SECRETS_KEY);
const run = { id: '11111111-1111-4111-8111-111111111111', orgId: '22222222-2222-4222-8222-222222222222', projectId: '33333333-3333-4333-8333-333333333333' };
const lease = { owner: 'here', expiresAt: new Date('2026-11-25T10:00:30Z') };
const info: RequestInfo = {
  targetType: 'AUTOMATION',
  mode: 'ASYNC',
  triggerSource: 'WEBHOOK',
  environment: 'PRODUCTION',
  requestPayload: {},
  enrollmentPolicy: 'EVERY_MATCH',
  onErrorPolicy: 'ABORT',
  startedByTokenId: null,
  definitionVersion: 1,
  sessionId: null,
  maxAttempts: 3,
};

const planOf = (changes: Partial<RunPlan> = {}): RunPlan => ({
  target: 'AUTOMATION',
  graph: 'workflow',
  mode: 'ASYNC',
  definitionVersion: 1,
  draftDefinition: null,
  body: { customerId: 'c-1' },
  payload: { customerId: 'c-1' },
  input: {},
  session: null,
  enrollmentPolicy: 'EVERY_MATCH',
  enrollmentSubject: null,
  onErrorPolicy: 'ABORT',
  callback: { url: 'https://hooks.example.com/done', secret: 'shh' },
  retry: { maxAttempts: 3, backoffSeconds: 2 },
  triggerKey: 'external_event',
  ...changes,
});

const outcomeOf = (changes: Partial<RunOutcome> = {}): RunOutcome => ({
  status: 'SUCCEEDED',
  messages: [],
  actions: [],
  result: { ok: true },
  errorMessage: null,
  steps: [],
  trace: { runtime: ENGINE_RUNTIME, graph: 'workflow', startedAt: '2026-11-25T10:00:00.000Z', completedAt: '2026-11-25T10:00:00.005Z', durationMs: 5, steps: 1 },
  vars: {},
  suspension: null,
  pendingApproval: null,
  ...changes,
});

const typesOf = (events: InvocationEventData[]) => events.map((event) => event.type);
const envelopeOf = (message: { data: Uint8Array }) => decodeEnvelope(message.data);
const now = Date.parse('2026-11-25T10:00:00Z');

describe('run lifecycle: a new run', () => {
  const request = { mode: 'ASYNC' as const, info, rejection: null, runAt: null, lease: () => lease };

  it('given a request the trigger checks reject, when it is recorded, then it is FAILED at once and sends nothing', () => {
    const record = firstRecordOf(run, { ...request, rejection: 'Missing key: customerId' });
    expect(record).toMatchObject({ status: 'FAILED', attempt: 0, lease: null, waitingJob: null, messages: [] });
    expect(record.events).toEqual([
      { type: 'InvocationFailed', errorMessage: 'Missing key: customerId', kind: 'TRIGGER_CHECK', attempt: 0, request: info, steps: [], trace: null, durationMs: 0 },
    ]);
  });

  it('given a start time, when it is recorded, then it is SCHEDULED and waits for its start job', () => {
    const runAt = new Date('2026-12-01T09:00:00Z');
    const record = firstRecordOf(run, { ...request, runAt });
    expect(record).toMatchObject({ status: 'SCHEDULED', attempt: 0, waitingJob: `run-${run.id}` });
    expect(record.events).toEqual([{ type: 'InvocationScheduled', request: info, scheduledFor: runAt.toISOString(), schedulerJobName: `run-${run.id}` }]);
    const job = unpackPayloadAs(envelopeOf(record.messages[0]!), EVENT_TYPES.SCHEDULE_JOB);
    expect({ name: job.name, kind: job.kind, invocationId: job.invocationId, dueAt: timestampDate(job.dueAt!) }).toEqual({
      name: `run-${run.id}`,
      kind: JobKind.START_RUN,
      invocationId: run.id,
      dueAt: runAt,
    });
  });

  it('given an async request, when it is recorded, then it is QUEUED with its RunInvocation command', () => {
    const record = firstRecordOf(run, request);
    expect(record).toMatchObject({ status: 'QUEUED', attempt: 0, lease: null, events: [{ type: 'InvocationQueued', request: info }] });
    expect(unpackPayloadAs(envelopeOf(record.messages[0]!), EVENT_TYPES.RUN_INVOCATION).invocationId).toBe(run.id);
  });

  it('given a sync request, when it is recorded, then it is RUNNING under this process lease, attempt 1', () => {
    const record = firstRecordOf(run, { ...request, mode: 'SYNC' });
    expect(record).toEqual({ status: 'RUNNING', attempt: 1, lease, waitingJob: null, events: [{ type: 'InvocationStarted', attempt: 1, request: info }], messages: [] });
  });

  it('given a sync run that ran before it was recorded, when it is recorded, then start and end go in one record at their own times', () => {
    const ending = endingOf({ ...run, attempt: 1, maxAttempts: 1 }, planOf({ mode: 'SYNC' }), outcomeOf(), secrets, now);
    const started = new Date(now - 5);
    const ended = new Date(now);
    const record = endedFirstRecordOf({ ...info, mode: 'SYNC' }, ending, { acceptedAt: started, startedAt: started, endedAt: ended });
    expect(record).toMatchObject({ status: 'SUCCEEDED', attempt: 1, lease: null, eventTimes: [started, ended] });
    expect(typesOf(record.events)).toEqual(['InvocationStarted', 'InvocationSucceeded']);
  });

  it('given an async run that ran before it was recorded, when it is recorded, then it was queued, started and ended in one record, with its callback and no start command', () => {
    const ending = endingOf({ ...run, attempt: 1, maxAttempts: 3 }, planOf(), outcomeOf(), secrets, now);
    const accepted = new Date(now - 9);
    const started = new Date(now - 5);
    const ended = new Date(now);
    const record = endedFirstRecordOf(info, ending, { acceptedAt: accepted, startedAt: started, endedAt: ended });
    expect(record).toMatchObject({ status: 'SUCCEEDED', attempt: 1, lease: null, waitingJob: null, eventTimes: [accepted, started, ended] });
    expect(typesOf(record.events)).toEqual(['InvocationQueued', 'InvocationStarted', 'InvocationSucceeded']);
    expect(record.events[0]).toEqual({ type: 'InvocationQueued', request: info });
    expect(record.messages).toEqual([]);
    const written = withHistory({ ...run, occurredAt: accepted, ...record });
    expect(written.messages.map((message) => envelopeOf(message).type)).toEqual([EVENT_TYPES.DELIVER_CALLBACK]);
    expect(unpackPayloadAs(envelopeOf(written.messages[0]!), EVENT_TYPES.DELIVER_CALLBACK)).toMatchObject({ invocationId: run.id, url: 'https://hooks.example.com/done' });
    expect(written.history.document).toMatchObject({ status: 'SUCCEEDED', invocationId: run.id });
  });

  it('a run may be executed before it is recorded only when its graph is self-contained and it writes nothing else on the way', () => {
    const compiledWith = (selfContained: boolean) => ({ graphs: { workflow: { selfContained }, bot: { selfContained } } }) as unknown as CompiledDefinition;
    expect(recordsOnceEnded(planOf(), compiledWith(true))).toBe(true);
    expect(recordsOnceEnded(planOf({ mode: 'SYNC' }), compiledWith(true))).toBe(true);
    expect(recordsOnceEnded(planOf(), compiledWith(false))).toBe(false);
    expect(recordsOnceEnded(planOf({ target: 'BOT', graph: 'bot' }), compiledWith(true))).toBe(false);
    expect(recordsOnceEnded(planOf({ enrollmentPolicy: 'ONE_TIME', enrollmentSubject: 'c-1' }), compiledWith(true))).toBe(false);
  });

  it('only an ending that ends the run can be a first record: a retry or a pause is recorded as usual', () => {
    const attempt = { ...run, attempt: 1, maxAttempts: 3 };
    expect(endsInFirstRecord(endingOf(attempt, planOf(), outcomeOf(), secrets, now))).toBe(true);
    expect(endsInFirstRecord(endingOf({ ...attempt, maxAttempts: 1 }, planOf(), outcomeOf({ status: 'FAILED', errorMessage: 'no' }), secrets, now))).toBe(true);
    expect(endsInFirstRecord(endingOf(attempt, planOf(), outcomeOf({ status: 'FAILED', errorMessage: 'no' }), secrets, now))).toBe(false);
  });
});

describe('run lifecycle: a run that comes up', () => {
  const waiting = { ...run, attempt: 1 };

  it('given its project was deleted or its external API turned off, then it is refused; an unknown project is not', () => {
    expect(projectRefusalOf({ deleted: true, externalApiEnabled: true })).toEqual({ errorMessage: PROJECT_DELETED_MESSAGE, kind: 'PROJECT_DELETED' });
    expect(projectRefusalOf({ deleted: false, externalApiEnabled: false })).toEqual({
      errorMessage: 'External API access is disabled for this project',
      kind: 'EXTERNAL_API_DISABLED',
    });
    expect(projectRefusalOf({ deleted: false, externalApiEnabled: true })).toBeNull();
    expect(projectRefusalOf(null)).toBeNull();
  });

  it('only a SCHEDULED run has its quota checked again', () => {
    expect(rechecksQuota({ status: 'SCHEDULED', waitingJob: 'run-x' })).toBe(true);
    expect(rechecksQuota({ status: 'QUEUED', dispatched: true })).toBe(false);
  });

  it('given a refusal, when it is recorded, then the run is FAILED from where it waited and calls back', () => {
    const from = { status: 'SCHEDULED' as const, waitingJob: `run-${run.id}` };
    const refused = refusedStart(waiting, planOf(), from, QUOTA_REFUSAL, secrets);
    expect(refused.expected).toBe(from);
    expect(refused.change).toMatchObject({ status: 'FAILED', waitingJob: null, callback: { url: 'https://hooks.example.com/done' } });
    expect(secrets.open(refused.change.callback!.sealedSecret!)).toBe('shh');
    expect(refused.events).toEqual([
      { type: 'InvocationFailed', errorMessage: QUOTA_REFUSAL.errorMessage, kind: 'QUOTA_EXCEEDED', attempt: 1, steps: [], trace: null, durationMs: 0 },
    ]);
  });

  it('given it may start, when it is claimed, then its next attempt is RUNNING under the lease', () => {
    const from = { status: 'QUEUED' as const, dispatched: true };
    expect(claimedStart(waiting, from, lease)).toEqual({
      expected: from,
      change: { status: 'RUNNING', attempt: 2, lease, waitingJob: null },
      events: [{ type: 'InvocationStarted', attempt: 2 }],
      messages: [],
    });
  });

  it('given a Wait ended, when it is claimed, then the same attempt resumes', () => {
    expect(claimedResume(waiting, 'resume-x-3', lease)).toEqual({
      expected: { status: 'SUSPENDED', waitingJob: 'resume-x-3' },
      change: { status: 'RUNNING', lease, waitingJob: null },
      events: [{ type: 'InvocationResumed', attempt: 1 }],
      messages: [],
    });
  });

  it('given its job was cancelled or moved, then it is CANCELLED without a callback, or keeps waiting for the new time', () => {
    expect(cancelled('run-x')).toEqual({
      expected: { status: 'SCHEDULED', waitingJob: 'run-x' },
      change: { status: 'CANCELLED', waitingJob: null },
      events: [{ type: 'InvocationCancelled' }],
      messages: [],
    });
    const runAt = new Date('2026-12-02T00:00:00Z');
    expect(rescheduled('run-x', runAt)).toMatchObject({
      change: { status: 'SCHEDULED', runAfter: runAt },
      events: [{ type: 'InvocationRescheduled', scheduledFor: runAt.toISOString() }],
    });
  });
});

describe('run lifecycle: a client cancels or moves a scheduled run', () => {
  const scheduled = { orgId: run.orgId, mode: 'ASYNC' as const, status: 'SCHEDULED' as const, waitingJob: `run-${run.id}` };

  it('given the run as read, then another organization, a sync run or a run not waiting for its start are told apart; the scheduler decides the rest', () => {
    expect(modifyBlockerOf(null, run.orgId)).toBe(ModifyOutcome.NOT_FOUND);
    expect(modifyBlockerOf(scheduled, 'another-org')).toBe(ModifyOutcome.NOT_FOUND);
    expect(modifyBlockerOf({ ...scheduled, mode: 'SYNC' }, run.orgId)).toBe(ModifyOutcome.NOT_ASYNC);
    expect(modifyBlockerOf({ ...scheduled, status: 'RUNNING', waitingJob: null }, run.orgId)).toBe(ModifyOutcome.NOT_SCHEDULED);
    expect(modifyBlockerOf(scheduled, run.orgId)).toBeNull();
  });

  it('given a run no longer SCHEDULED, then it is "no longer scheduled" only if its job fired after the request was received', () => {
    const [first] = historiesOf([{ ...run, occurredAt: new Date(now), events: [{ type: 'InvocationScheduled', request: info, scheduledFor: new Date(now + 1000).toISOString(), schedulerJobName: 'run-x' }] }]).events;
    const started = foldEvents(foldEvents(null, [first!]), nextEvents(run, 1, [{ type: 'InvocationStarted', attempt: 1 }], new Date(now + 1000)));
    expect(notScheduledOutcome(started, new Date(now + 900))).toBe(ModifyOutcome.NO_LONGER_SCHEDULED);
    expect(notScheduledOutcome(started, new Date(now + 1100))).toBe(ModifyOutcome.NOT_SCHEDULED);
    expect(notScheduledOutcome(foldEvents(null, [first!]), new Date(now))).toBe(ModifyOutcome.NOT_SCHEDULED);
    expect(notScheduledOutcome(null, new Date(now))).toBe(ModifyOutcome.NOT_SCHEDULED);
  });
});

describe('run lifecycle: an attempt ends', () => {
  const attempt = (number: number) => ({ ...run, attempt: number, maxAttempts: 3 });

  it('given an async success with a callback URL, then SUCCEEDED, the live result, and a callback with the sealed secret', () => {
    const ending = endingOf(attempt(1), planOf(), outcomeOf(), secrets, now);
    expect(ending.change).toMatchObject({ status: 'SUCCEEDED', lease: null, sealedResumeState: null, waitingJob: null, callback: { url: 'https://hooks.example.com/done' } });
    expect(secrets.open(ending.change.callback!.sealedSecret!)).toBe('shh');
    expect(ending.liveResult).toEqual({ ok: true });
    expect(typesOf(ending.events)).toEqual(['InvocationSucceeded']);
    expect(ending.messages).toEqual([]);
  });

  it('given a sync run or no callback URL, then it does not call back', () => {
    expect(endingOf(attempt(1), planOf({ mode: 'SYNC' }), outcomeOf(), secrets, now).change.callback).toBeUndefined();
    expect(endingOf(attempt(1), planOf({ callback: { url: null, secret: null } }), outcomeOf(), secrets, now).change.callback).toBeUndefined();
  });

  it('given an automation failure with attempts left, then a retry after the backoff, through the scheduler, without a callback', () => {
    const ending = endingOf(attempt(2), planOf(), outcomeOf({ status: 'FAILED', errorMessage: 'boom', result: null }), secrets, now);
    const retryAt = new Date(now + 4000);
    expect(ending.change).toEqual({ status: 'QUEUED', lease: null, runAfter: retryAt, waitingJob: `retry-${run.id}-3` });
    expect(ending.events).toEqual([{ type: 'InvocationRetryScheduled', failedAttempt: 2, errorMessage: 'boom', retryAt: retryAt.toISOString(), steps: [], messages: [], trace: expect.anything() }]);
    const job = unpackPayloadAs(envelopeOf(ending.messages[0]!), EVENT_TYPES.SCHEDULE_JOB);
    expect({ name: job.name, kind: job.kind }).toEqual({ name: `retry-${run.id}-3`, kind: JobKind.RETRY_RUN });
    expect(ending.liveResult).toBeNull();
  });

  it('given the last attempt failed, then FAILED, the dead letter, and the callback', () => {
    const ending = endingOf(attempt(3), planOf(), outcomeOf({ status: 'FAILED', errorMessage: 'boom', result: null }), secrets, now);
    expect(ending.change).toMatchObject({ status: 'FAILED', callback: { url: 'https://hooks.example.com/done' } });
    expect(typesOf(ending.events)).toEqual(['InvocationFailed', 'InvocationRetriesExhausted']);
    expect(ending.events[1]).toMatchObject({ failureReason: 'boom', attemptCount: 3, triggerKey: 'external_event', requestPayload: { customerId: 'c-1' } });
  });

  it('given a timeout of a flow (no automatic retries), then TIMEOUT and the callback, no dead letter', () => {
    const plan = planOf({ target: 'FLOW', graph: 'flow' });
    const ending = endingOf(attempt(1), plan, outcomeOf({ status: 'TIMEOUT', errorMessage: 'Run timed out after 30000 ms', result: null }), secrets, now);
    expect(ending.change).toMatchObject({ status: 'TIMEOUT', callback: { url: 'https://hooks.example.com/done' } });
    expect(ending.events).toEqual([expect.objectContaining({ type: 'InvocationTimedOut', errorMessage: 'Run timed out after 30000 ms' })]);
  });

  it('given a Wait node, then SUSPENDED with its state sealed and a resume job, without a callback', () => {
    const resumeAt = '2026-11-25T11:00:00.000Z';
    const outcome = outcomeOf({ status: 'SUSPENDED', result: null, vars: { n: 1 }, suspension: { kind: 'wait', nodeId: 'wait-1', resumeAt } });
    const ending = endingOf(attempt(1), planOf(), outcome, secrets, now);
    expect(ending.change).toMatchObject({ status: 'SUSPENDED', waitingJob: `resume-${run.id}-0`, callback: undefined });
    const state = JSON.parse(secrets.open(ending.change.sealedResumeState!)) as SuspendedState;
    expect(state).toMatchObject({ vars: { n: 1 }, suspension: { kind: 'wait', nodeId: 'wait-1', resumeAt } });
    expect(ending.events).toEqual([expect.objectContaining({ type: 'InvocationSuspended', resumeAt })]);
    expect(unpackPayloadAs(envelopeOf(ending.messages[0]!), EVENT_TYPES.SCHEDULE_JOB).kind).toBe(JobKind.RESUME_RUN);
  });

  it('given a ONE_TIME subject enrolled by another run, then a flow succeeds with the note beside its messages and actions', () => {
    const plan = planOf({ target: 'FLOW', graph: 'flow', enrollmentPolicy: 'ONE_TIME', enrollmentSubject: 'c-1' });
    const ending = skippedEnding(attempt(1), plan, 'other-run', secrets);
    const reason = 'Already enrolled: ONE_TIME policy, subject "c-1" was enrolled by run other-run';
    expect(ending.change).toEqual({ status: 'SUCCEEDED', lease: null, callback: expect.objectContaining({ url: 'https://hooks.example.com/done' }) });
    expect(ending.liveResult).toEqual({ messages: [], actions: [], skipped: true, reason });
    expect(ending.events).toEqual([expect.objectContaining({ type: 'InvocationSucceeded', result: ending.liveResult, durationMs: 0 })]);
  });

  it('given the process running it stopped, then a retry at once while attempts are left, else FAILED as interrupted with the dead letter', () => {
    const at = new Date(now);
    const retried = interruptedEnding(attempt(1), planOf(), 'gone', secrets, at);
    expect(retried.expected).toEqual({ status: 'RUNNING', leaseOwner: 'gone' });
    expect(retried.change).toEqual({ status: 'QUEUED', lease: null, runAfter: at, waitingJob: `retry-${run.id}-2` });
    const failed = interruptedEnding(attempt(3), planOf(), 'gone', secrets, at);
    expect(failed.change).toMatchObject({ status: 'FAILED', lease: null, callback: { url: 'https://hooks.example.com/done' } });
    expect(failed.events[0]).toMatchObject({ type: 'InvocationFailed', kind: 'INTERRUPTED', errorMessage: INTERRUPTED_MESSAGE, attempt: 3 });
    expect(typesOf(failed.events)).toEqual(['InvocationFailed', 'InvocationRetriesExhausted']);
  });
});

describe('run lifecycle: what a transition publishes', () => {
  const [queued] = historiesOf([{ ...run, occurredAt: new Date(now), events: [{ type: 'InvocationQueued', request: info }] }]).events;
  const document = foldEvents(null, [queued!]);

  it('given an ending that calls back, then its events, then the DeliverCallback with the run as GET shows it', () => {
    const ending = endingOf({ ...run, attempt: 1, maxAttempts: 1 }, planOf({ target: 'FLOW', graph: 'flow' }), outcomeOf({ messages: ['hi'] }), secrets, now);
    const stored = nextEvents(run, 1, ending.events, new Date(now + 10));
    const after = foldEvents(document, stored);
    const out = outgoingOf(stored, ending.messages, ending.change.callback, after, run);
    expect(out.map((message) => envelopeOf(message).type)).toEqual([EVENT_TYPES.INVOCATION_SUCCEEDED, EVENT_TYPES.DELIVER_CALLBACK]);
    const callback = unpackPayloadAs(envelopeOf(out[1]!), EVENT_TYPES.DELIVER_CALLBACK);
    expect(callback).toMatchObject({ invocationId: run.id, url: 'https://hooks.example.com/done', runStatus: 'SUCCEEDED' });
    expect(JSON.parse(new TextDecoder().decode(callback.body))).toMatchObject({ invocationId: run.id, status: 'SUCCEEDED', result: { messages: ['hi'], actions: [] } });
  });

  it('given a status that does not call back, then no DeliverCallback, whatever target it is given', () => {
    const target = callbackOnEnd(planOf(), 'SUCCEEDED', secrets)!;
    const stored = nextEvents(run, 1, [{ type: 'InvocationCancelled' }], new Date(now + 10));
    const out = outgoingOf(stored, [], target, foldEvents(document, stored), run);
    expect(out.map((message) => envelopeOf(message).type)).toEqual([EVENT_TYPES.INVOCATION_CANCELLED]);
    expect(callbackOnEnd(planOf(), 'CANCELLED', secrets)).toBeUndefined();
    expect(callbackOnEnd(planOf(), 'SUSPENDED', secrets)).toBeUndefined();
    expect(callbackOnEnd(planOf(), 'QUEUED', secrets)).toBeUndefined();
  });
});

describe('monthly quota decisions', () => {
  const plans = new Map<string, QuotaPlan>([
    ['org-a', { limit: 2, renewalDay: null }],
    ['org-b', { limit: 10, renewalDay: 15 }],
  ]);
  const at = new Date('2026-11-20T12:00:00Z');
  const items = [
    { id: 'r1', orgId: 'org-b', occurredAt: at },
    { id: 'r2', orgId: 'org-free', occurredAt: at },
    { id: 'r3', orgId: 'org-a', occurredAt: at },
    { id: 'r4', orgId: 'org-a', occurredAt: at },
    { id: 'r5', orgId: 'org-a', occurredAt: at },
  ];

  it('given a batch, then only the organizations with a quota are counted, replays are not charged, and groups come in one order', () => {
    const bound = quotaBound(items, plans);
    expect(bound).toEqual([0, 2, 3, 4]);
    const groups = quotaGroupsOf(items, bound, plans, new Set(['r4']));
    expect(groups.map((group) => [group.orgId, group.indices, group.period.start.toISOString()])).toEqual([
      ['org-a', [2, 4], '2026-11-01T00:00:00.000Z'],
      ['org-b', [0], '2026-11-15T00:00:00.000Z'],
    ]);
  });

  it('given a counter, then the first requests up to the limit are granted and the others told the figures', () => {
    const [group] = quotaGroupsOf(items, [2, 3, 4], plans, new Set());
    expect(grantOf(group!, 1)).toEqual({ granted: 1, refused: { limit: 2, used: 2, periodStart: new Date('2026-11-01T00:00:00Z') } });
    expect(grantOf(group!, 5).granted).toBe(0);
  });

  it('given charged requests that lost their key, then each group gets them back', () => {
    const [group] = quotaGroupsOf(items, [2, 3], plans, new Set());
    const charged = new Map([
      [2, group!],
      [3, group!],
    ]);
    expect([...refundsOf(charged, [1, 3])]).toEqual([[group, 1]]);
  });

  it('given a scheduled run that comes up, then it does not count against itself when it was counted in this period', () => {
    const plan = { limit: 2, renewalDay: null };
    const period = { start: new Date('2026-11-01T00:00:00Z'), end: new Date('2026-12-01T00:00:00Z') };
    expect(scheduledStartVerdict(plan, period, 2, true)).toEqual({ allowed: true });
    expect(scheduledStartVerdict(plan, period, 2, false)).toEqual({ allowed: false, figures: { limit: 2, used: 2, periodStart: period.start } });
  });
});
