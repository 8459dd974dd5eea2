/**
 * The invocation read model: the document GET /external-invocations/{id} returns, as a fold of
 * the run's events. Pure, so the same function projects events as they happen and rebuilds a
 * document from the event store.
 */
import type { JsonValue } from '@runline/engine';
import type { InvocationEvent, RequestInfo } from './invocation-event.js';
import { scheduleFireFields, withScheduleTrace } from './schedule-fires.js';

/** The spec's Invocation resource, plus the policies and attempts the run used. */
export interface InvocationDocument {
  invocationId: string;
  status: string;
  environment: string;
  triggerSource: string;
  mode: string;
  targetType: string;
  startedAt: string | null;
  completedAt: string | null;
  durationMs: number | null;
  errorMessage: string | null;
  requestPayload: Record<string, JsonValue>;
  result: JsonValue;
  trace: JsonValue;
  steps: JsonValue[];
  callbackAttempts: JsonValue[];
  scheduledFor: string | null;
  schedulerStatus: string | null;
  schedulerJobName: string | null;
  pendingApproval: JsonValue;
  enrollmentPolicy: string | null;
  onErrorPolicy: string;
  attempts: number;
  maxAttempts: number;
  /**
   * The published definition version the run used: the one its latest executed segment ran
   * (its trace's `definitionVersion`), else the one in force when it was accepted; null for a
   * draft test run or a run with no published definition. Absent on runs recorded before it.
   */
  definitionVersion?: number | null;
  sessionId?: string;
  createdAt: string;
  updatedAt: string;
}

export class ProjectionError extends Error {}

/** Applies one event. `document` is null only for a run's first event. */
export function applyInvocationEvent(document: InvocationDocument | null, event: InvocationEvent): InvocationDocument {
  return withScheduleTrace(withDefinitionVersion(foldEvent(document, event), event));
}

/** The version an attempt's trace says it executed (the invocation service stamps it); else the document's as it was. */
function withDefinitionVersion(document: InvocationDocument, event: InvocationEvent): InvocationDocument {
  const trace = 'trace' in event.data ? event.data.trace : null;
  const executed = trace !== null && typeof trace === 'object' && !Array.isArray(trace) ? trace.definitionVersion : undefined;
  return typeof executed === 'number' ? { ...document, definitionVersion: executed } : document;
}

function foldEvent(document: InvocationDocument | null, event: InvocationEvent): InvocationDocument {
  const data = event.data;
  const at = event.occurredAt;
  const base = document ?? firstDocument(event);
  const next: InvocationDocument = { ...base, updatedAt: at };
  switch (data.type) {
    case 'InvocationQueued':
      return { ...next, status: 'QUEUED' };
    case 'InvocationScheduled':
      return { ...next, status: 'SCHEDULED', scheduledFor: data.scheduledFor, schedulerJobName: data.schedulerJobName, schedulerStatus: 'SCHEDULED' };
    case 'InvocationRescheduled':
      return { ...next, scheduledFor: data.scheduledFor };
    case 'InvocationCancelled':
      if (data.errorMessage !== undefined) return { ...next, status: 'CANCELLED', errorMessage: data.errorMessage, completedAt: at, durationMs: null };
      return { ...next, status: 'CANCELLED', schedulerStatus: 'CANCELLED', completedAt: at, durationMs: null };
    case 'InvocationResumed':
      return { ...next, status: 'RUNNING', pendingApproval: null };
    case 'InvocationStarted':
      return {
        ...next,
        ...fired(base),
        status: 'RUNNING',
        attempts: data.attempt,
        // durationMs runs from the first start, so a retried run's duration covers every attempt.
        startedAt: base.startedAt ?? at,
        errorMessage: null,
        pendingApproval: null,
      };
    case 'InvocationSucceeded':
      return finished(next, at, 'SUCCEEDED', { result: data.result, steps: data.steps, trace: keepFlowControl(base.trace, data.trace), errorMessage: null });
    case 'InvocationFailed':
      return finished({ ...next, ...fired(base) }, at, 'FAILED', { steps: data.steps, trace: keepFlowControl(base.trace, data.trace), errorMessage: data.errorMessage });
    case 'InvocationTimedOut':
      return finished(next, at, 'TIMEOUT', { steps: data.steps, trace: keepFlowControl(base.trace, data.trace), errorMessage: data.errorMessage });
    case 'InvocationSuspended':
      return { ...next, status: 'SUSPENDED', steps: data.steps, trace: keepFlowControl(base.trace, data.trace), pendingApproval: data.pendingApproval };
    case 'InvocationRetryScheduled':
      return { ...next, status: 'QUEUED', steps: data.steps, trace: keepFlowControl(base.trace, data.trace), errorMessage: data.errorMessage };
    case 'InvocationApprovalDecided': {
      // The run stays SUSPENDED until it resumes; the decision shows on the approval's step at once.
      const { decision, decidedBy, decidedAt, comment } = data;
      return { ...next, pendingApproval: null, steps: withApproval(base.steps, data.nodeId, { decision, decidedBy, decidedAt, comment }) };
    }
    case 'InvocationRetriesExhausted':
      return next;
  }
}

/** `steps` with the decision on the latest step still SUSPENDED at approval node `nodeId`. */
function withApproval(steps: JsonValue[], nodeId: string, approval: { [key: string]: JsonValue }): JsonValue[] {
  const isPending = (step: JsonValue) =>
    typeof step === 'object' && step !== null && !Array.isArray(step) && step.nodeId === nodeId && step.status === 'SUSPENDED';
  const index = steps.findLastIndex(isPending);
  if (index < 0) return steps;
  return steps.map((step, at) => (at === index ? { ...(step as { [key: string]: JsonValue }), approval } : step));
}

/**
 * One entry of `callbackAttempts`, from the callback service's CallbackAttempted event. The
 * callback service keeps the deliveries; the invocation service keeps these entries in
 * `callback_attempts` (keyed by webhookId and attempt) and folds them into the document.
 */
export interface CallbackAttemptEntry {
  /** The Standard Webhooks `webhook-id`, the same for every attempt of one callback. */
  webhookId: string;
  attempt: number;
  attemptedAt: string;
  durationMs: number;
  /** ACKNOWLEDGED, HTTP_ERROR, TIMEOUT, REFUSED, TLS_ERROR or CONNECTION_ERROR. */
  outcome: string;
  /** What the receiver answered; null when it did not (timeout, refused address, TLS or connection error). */
  statusCode: number | null;
  error: string | null;
  /**
   * True when this attempt ended the delivery: acknowledged, or the last attempt failed (the
   * callback service's `final`). Entries recorded before this field existed lack it.
   */
  final?: boolean;
}

/**
 * Adds one callback attempt. Idempotent: an entry already there (same webhookId and attempt)
 * changes nothing; entries stay ordered by attempt whatever order they arrive in.
 */
export function applyCallbackAttempt(document: InvocationDocument, entry: CallbackAttemptEntry): InvocationDocument {
  const known = document.callbackAttempts.some((item) => {
    const existing = item as unknown as Partial<CallbackAttemptEntry> | null;
    return existing?.webhookId === entry.webhookId && existing.attempt === entry.attempt;
  });
  if (known) return document;
  const callbackAttempts = [...document.callbackAttempts, entry as unknown as JsonValue].sort(
    (a, b) => attemptOrder(a) - attemptOrder(b),
  );
  const updatedAt = entry.attemptedAt > document.updatedAt ? entry.attemptedAt : document.updatedAt;
  return { ...document, callbackAttempts, updatedAt };
}

function attemptOrder(item: JsonValue): number {
  const entry = item as unknown as Partial<CallbackAttemptEntry> | null;
  return Date.parse(entry?.attemptedAt ?? '') * 10 + (entry?.attempt ?? 0);
}

/** Folds a whole event history (ordered by sequence) into its document. */
export function projectInvocation(events: readonly InvocationEvent[]): InvocationDocument | null {
  let document: InvocationDocument | null = null;
  for (const event of events) document = applyInvocationEvent(document, event);
  return document;
}

function firstDocument(event: InvocationEvent): InvocationDocument {
  const request = requestOf(event);
  if (!request) throw new ProjectionError(`event ${event.data.type} of ${event.invocationId} cannot start a run's history`);
  return {
    invocationId: event.invocationId,
    status: 'QUEUED',
    environment: request.environment,
    triggerSource: request.triggerSource,
    mode: request.mode,
    targetType: request.targetType,
    startedAt: null,
    completedAt: null,
    durationMs: null,
    errorMessage: null,
    requestPayload: request.requestPayload,
    result: null,
    trace: null,
    steps: [],
    callbackAttempts: [],
    schedulerStatus: null,
    ...scheduleFireFields(request),
    pendingApproval: null,
    enrollmentPolicy: request.enrollmentPolicy,
    onErrorPolicy: request.onErrorPolicy,
    attempts: 0,
    maxAttempts: request.maxAttempts,
    // Version 0 is the draft (a test run), or no published version at all.
    definitionVersion: request.definitionVersion > 0 ? request.definitionVersion : null,
    ...(request.sessionId === null ? {} : { sessionId: request.sessionId }),
    createdAt: event.occurredAt,
    updatedAt: event.occurredAt,
  };
}

function requestOf(event: InvocationEvent): RequestInfo | undefined {
  const data = event.data;
  switch (data.type) {
    case 'InvocationQueued':
    case 'InvocationScheduled':
    case 'InvocationStarted':
    case 'InvocationFailed':
      return data.request;
    default:
      return undefined;
  }
}

/**
 * An attempt's trace, keeping the `flowControl` the gate set on the run (DESIGN section 13:
 * started runs show `{waitedMs, reasons}`), which the engine's trace does not know of.
 */
export function keepFlowControl(previous: JsonValue, trace: JsonValue): JsonValue {
  const isObject = (value: JsonValue): value is { [key: string]: JsonValue } => typeof value === 'object' && value !== null && !Array.isArray(value);
  if (!isObject(previous) || previous.flowControl === undefined) return trace;
  return { ...(isObject(trace) ? trace : {}), flowControl: previous.flowControl };
}

/** A scheduled run's job has done its part once the run starts (or fails when it comes up). */
function fired(document: InvocationDocument): Partial<InvocationDocument> {
  return document.schedulerStatus === 'SCHEDULED' ? { schedulerStatus: 'FIRED' } : {};
}

function finished(
  document: InvocationDocument,
  at: string,
  status: string,
  fields: Pick<InvocationDocument, 'steps' | 'trace' | 'errorMessage'> & { result?: JsonValue },
): InvocationDocument {
  const durationMs = document.startedAt === null ? null : Math.max(0, Date.parse(at) - Date.parse(document.startedAt));
  return { ...document, ...fields, status, completedAt: at, durationMs, pendingApproval: null };
}
