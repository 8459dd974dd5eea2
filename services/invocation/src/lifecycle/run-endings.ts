/**
 * The run lifecycle, ending side: pure decisions in the manner of `decide`. From an attempt's
 * outcome (success, failure, timeout, suspension, a skipped enrollment, a process that died)
 * they give the transition that ends it: the state change, the events, the messages (the
 * scheduler job of a retry or a Wait; the DeliverCallback through `callbackOnEnd`), and the
 * live result for a sync caller. An async automation with attempts left is retried after a
 * backoff instead; after its last one it also records InvocationRetriesExhausted (the dead
 * letter).
 */
import type { BusMessage } from '@runline/bus';
import { JobKind } from '@runline/contracts';
import { ENGINE_RUNTIME, shapeRunResult, type JsonValue, type RunOutcome } from '@runline/engine';
import { redactSecrets } from '@runline/observability';
import type { SecretBox } from '@runline/runtime';
import type { InvocationEventData } from './invocation-event.js';
import { callbackOnEnd } from './run-callback.js';
import type { StateChange, Transition } from './run-lifecycle.js';
import { retriesAutomatically, type RunPlan } from './run-plan.js';
import { jobNames, waitForJob, type JobOwner } from './scheduler-jobs.js';

/** The run as an ending needs it. */
export type AttemptOf = JobOwner & { attempt: number; maxAttempts: number };

/** What ending an attempt writes, and the result for a sync caller. */
export interface Ending {
  change: StateChange & { status: 'QUEUED' | 'SUCCEEDED' | 'FAILED' | 'TIMEOUT' | 'SUSPENDED' };
  events: InvocationEventData[];
  messages: BusMessage[];
  liveResult: JsonValue;
  /** What became of the run, for the log; null when not logged. */
  what: string | null;
}

export type ApprovalDecisionName = 'approve' | 'reject';

/** A decision as the resume state keeps it, unredacted (it is sealed), for the engine's approval step. */
export interface ApprovalDecisionRecord {
  nodeId: string;
  decision: ApprovalDecisionName;
  decidedBy: string;
  decidedAt: string;
  comment: string | null;
}

/** What a suspended run keeps (sealed) to continue from. */
export interface SuspendedState {
  vars: Record<string, unknown>;
  suspension: RunOutcome['suspension'];
  steps: RunOutcome['steps'];
  messages: RunOutcome['messages'];
  actions: RunOutcome['actions'];
  /** At an approval, once decided (`run-approvals.ts`): what the resume continues with. */
  decision?: ApprovalDecisionRecord;
}

/** How an attempt ended: see the file comment for what follows which outcome. */
export function endingOf(row: AttemptOf, plan: RunPlan, outcome: RunOutcome, secrets: SecretBox, now: number = Date.now()): Ending {
  const attempt = row.attempt;
  const record = {
    steps: redactSecrets(outcome.steps) as unknown as JsonValue[],
    trace: redactSecrets(outcome.trace) as unknown as JsonValue,
    messages: outcome.messages.map((text) => redactSecrets(text)),
  };
  const durationMs = outcome.trace.durationMs;
  const failed = outcome.status === 'FAILED' || outcome.status === 'TIMEOUT';
  const retries = retriesAutomatically(plan);

  if (failed && retries && attempt < row.maxAttempts) {
    const retryAt = new Date(now + backoffMs(plan.retry.backoffSeconds, attempt));
    const event: InvocationEventData = {
      type: 'InvocationRetryScheduled',
      failedAttempt: attempt,
      errorMessage: outcome.errorMessage ?? 'Run failed',
      retryAt: retryAt.toISOString(),
      ...record,
    };
    const wait = waitForJob(JobKind.RETRY_RUN, jobNames.retry(row.id, attempt), row, retryAt);
    return {
      change: { status: 'QUEUED', lease: null, runAfter: retryAt, waitingJob: wait.name },
      events: [event],
      messages: [wait.command],
      liveResult: null,
      what: `retry ${attempt + 1}/${row.maxAttempts} at ${retryAt.toISOString()}`,
    };
  }

  const events: InvocationEventData[] = [];
  let status: 'SUCCEEDED' | 'FAILED' | 'TIMEOUT' | 'SUSPENDED';
  let sealedResumeState: string | null = null;
  let wait: { name: string; command: BusMessage } | null = null;
  const liveResult: JsonValue = failed ? null : (shapeRunResult(plan.graph, outcome) as unknown as JsonValue);
  switch (outcome.status) {
    case 'SUCCEEDED':
    case 'WAITING_FOR_INPUT':
      status = 'SUCCEEDED';
      events.push({ type: 'InvocationSucceeded', result: redactSecrets(liveResult), durationMs, ...record });
      break;
    case 'FAILED':
      status = 'FAILED';
      events.push({ type: 'InvocationFailed', errorMessage: outcome.errorMessage ?? 'Run failed', kind: 'RUN', attempt, durationMs, ...record });
      break;
    case 'TIMEOUT':
      status = 'TIMEOUT';
      events.push({ type: 'InvocationTimedOut', errorMessage: outcome.errorMessage ?? 'Run timed out', durationMs, ...record });
      break;
    case 'SUSPENDED':
      status = 'SUSPENDED';
      sealedResumeState = secrets.seal(
        JSON.stringify({ vars: outcome.vars, suspension: outcome.suspension, steps: outcome.steps, messages: outcome.messages, actions: outcome.actions } satisfies SuspendedState),
      );
      if (outcome.suspension?.kind === 'wait') {
        wait = waitForJob(JobKind.RESUME_RUN, jobNames.resume(row.id, outcome.steps.length), row, new Date(outcome.suspension.resumeAt));
      }
      events.push({
        type: 'InvocationSuspended',
        pendingApproval: redactSecrets(outcome.pendingApproval) as unknown as JsonValue,
        resumeAt: outcome.suspension?.kind === 'wait' ? outcome.suspension.resumeAt : null,
        steps: record.steps,
        trace: record.trace,
        messages: record.messages,
      });
      break;
  }
  if (failed && retries) events.push(exhausted(plan, attempt, outcome.errorMessage ?? 'Run failed', secrets));
  return {
    change: { status, lease: null, sealedResumeState, waitingJob: wait?.name ?? null, callback: callbackOnEnd(plan, status, secrets) },
    events,
    messages: wait ? [wait.command] : [],
    liveResult,
    what: status,
  };
}

/**
 * A ONE_TIME run whose subject another run (`enrolledBy`) enrolled first: it succeeds without
 * running, its result saying why. A flow's result is { messages, actions }: the note goes
 * beside them.
 */
export function skippedEnding(row: AttemptOf, plan: RunPlan, enrolledBy: string, secrets: SecretBox): Ending {
  const now = new Date().toISOString();
  const skip = { skipped: true, reason: `Already enrolled: ONE_TIME policy, subject "${plan.enrollmentSubject}" was enrolled by run ${enrolledBy}` };
  const outcome: RunOutcome = {
    status: 'SUCCEEDED',
    messages: [],
    actions: [],
    result: skip,
    errorMessage: null,
    steps: [],
    trace: { runtime: ENGINE_RUNTIME, graph: plan.graph, startedAt: now, completedAt: now, durationMs: 0, steps: 0 },
    vars: {},
    suspension: null,
    pendingApproval: null,
  };
  if (plan.graph !== 'flow') return endingOf(row, plan, outcome, secrets);
  const result: JsonValue = { messages: [], actions: [], ...skip };
  return {
    change: { status: 'SUCCEEDED', lease: null, callback: callbackOnEnd(plan, 'SUCCEEDED', secrets) },
    events: [{ type: 'InvocationSucceeded', result, durationMs: 0, steps: [], trace: outcome.trace as unknown as JsonValue }],
    messages: [],
    liveResult: result,
    what: null,
  };
}

/** Why a RUNNING run whose lease expired is ended. */
export const INTERRUPTED_MESSAGE = 'Run was interrupted: the process running it stopped before it finished';

/**
 * A RUNNING run whose process stopped (its lease, held by `leaseOwner`, expired): FAILED as
 * interrupted, or, for an async automation with attempts left, retried at once through the
 * scheduler like every retry.
 */
export function interruptedEnding(row: AttemptOf, plan: RunPlan, leaseOwner: string, secrets: SecretBox, now: Date = new Date()): Transition {
  const retries = retriesAutomatically(plan);
  const expected = { status: 'RUNNING' as const, leaseOwner };
  if (retries && row.attempt < row.maxAttempts) {
    const retryAt = now;
    const wait = waitForJob(JobKind.RETRY_RUN, jobNames.retry(row.id, row.attempt), row, retryAt);
    return {
      expected,
      change: { status: 'QUEUED', lease: null, runAfter: retryAt, waitingJob: wait.name },
      events: [{ type: 'InvocationRetryScheduled', failedAttempt: row.attempt, errorMessage: INTERRUPTED_MESSAGE, retryAt: retryAt.toISOString(), steps: [], trace: null }],
      messages: [wait.command],
    };
  }
  const events: InvocationEventData[] = [
    { type: 'InvocationFailed', errorMessage: INTERRUPTED_MESSAGE, kind: 'INTERRUPTED', attempt: row.attempt, steps: [], trace: null, durationMs: 0 },
  ];
  if (retries) events.push(exhausted(plan, row.attempt, INTERRUPTED_MESSAGE, secrets));
  return { expected, change: { status: 'FAILED', lease: null, callback: callbackOnEnd(plan, 'FAILED', secrets) }, events, messages: [] };
}

/** The dead-letter event of an async automation run that failed its last attempt. */
export function exhausted(plan: RunPlan, attempts: number, reason: string, secrets: SecretBox): InvocationEventData {
  return {
    type: 'InvocationRetriesExhausted',
    requestPayload: redactSecrets(plan.body) as Record<string, JsonValue>,
    sealedRequest: secrets.seal(JSON.stringify(plan.body)),
    failureReason: reason,
    attemptCount: attempts,
    triggerKey: plan.triggerKey,
  };
}

/** Exponential: backoffSeconds before the first retry, doubling after each further failure. */
export function backoffMs(backoffSeconds: number, failedAttempt: number): number {
  return Math.round(backoffSeconds * 1000 * 2 ** Math.max(0, failedAttempt - 1));
}

/** An outcome for a run that could not even start (definition missing, engine refused the request). */
export function failedOutcome(plan: RunPlan, errorMessage: string): RunOutcome {
  const now = new Date().toISOString();
  return {
    status: 'FAILED',
    messages: [],
    actions: [],
    result: null,
    errorMessage,
    steps: [],
    trace: { runtime: ENGINE_RUNTIME, graph: plan.graph, startedAt: now, completedAt: now, durationMs: 0, steps: 0 },
    vars: {},
    suspension: null,
    pendingApproval: null,
  };
}
