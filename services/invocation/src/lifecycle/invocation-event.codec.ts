/**
 * Stored invocation events → protobuf envelopes on `invocation.evt.*` (the public contract in
 * proto/runline/invocation/v1/events.proto). The envelope id is the stored event's id, so a
 * republished event is dropped by the bus as a duplicate.
 */
import type { BusMessage } from '@runline/bus';
import {
  ApprovalDecision,
  create,
  EVENT_TYPES,
  FailureKind,
  InvocationApprovalDecidedSchema,
  InvocationCancelledSchema,
  InvocationFailedSchema,
  InvocationQueuedSchema,
  InvocationRequestInfoSchema,
  InvocationRescheduledSchema,
  InvocationResumedSchema,
  InvocationScheduledSchema,
  InvocationRetriesExhaustedSchema,
  InvocationRetryScheduledSchema,
  InvocationStartedSchema,
  InvocationSucceededSchema,
  InvocationSuspendedSchema,
  InvocationTimedOutSchema,
  newEnvelope,
  RunMode,
  RunTarget,
  timestampFromDate,
  toBusMessage,
  type Envelope,
  type InvocationRequestInfo,
} from '@runline/contracts';
import type { FailureKindName, InvocationEvent, RequestInfo, RunModeName, TargetType } from './invocation-event.js';

export const RUN_TARGETS: Record<TargetType, RunTarget> = {
  BOT: RunTarget.BOT,
  FLOW: RunTarget.FLOW,
  AUTOMATION: RunTarget.AUTOMATION,
};
export const APPROVAL_DECISIONS: Record<'approve' | 'reject', ApprovalDecision> = {
  approve: ApprovalDecision.APPROVE,
  reject: ApprovalDecision.REJECT,
};
export const RUN_MODES: Record<RunModeName, RunMode> = { SYNC: RunMode.SYNC, ASYNC: RunMode.ASYNC };
const FAILURE_KINDS: Record<FailureKindName, FailureKind> = {
  RUN: FailureKind.RUN,
  TRIGGER_CHECK: FailureKind.TRIGGER_CHECK,
  INTERRUPTED: FailureKind.INTERRUPTED,
  EXTERNAL_API_DISABLED: FailureKind.EXTERNAL_API_DISABLED,
  QUOTA_EXCEEDED: FailureKind.QUOTA_EXCEEDED,
  PROJECT_DELETED: FailureKind.PROJECT_DELETED,
};

export function invocationEventMessage(event: InvocationEvent): BusMessage {
  return toBusMessage(invocationEnvelope(event));
}

export function invocationEnvelope(event: InvocationEvent): Envelope {
  const common = {
    id: event.id,
    orgId: event.orgId,
    projectId: event.projectId,
    invocationId: event.invocationId,
    occurredAt: new Date(event.occurredAt),
    sequence: event.sequence,
  };
  const data = event.data;
  const json = JSON.stringify;
  switch (data.type) {
    case 'InvocationQueued':
      return newEnvelope({ ...common, type: EVENT_TYPES.INVOCATION_QUEUED, payload: create(InvocationQueuedSchema, { request: requestInfo(data.request) }) });
    case 'InvocationScheduled':
      return newEnvelope({
        ...common,
        type: EVENT_TYPES.INVOCATION_SCHEDULED,
        payload: create(InvocationScheduledSchema, {
          request: requestInfo(data.request),
          scheduledFor: timestampFromDate(new Date(data.scheduledFor)),
          schedulerJobName: data.schedulerJobName,
        }),
      });
    case 'InvocationRescheduled':
      return newEnvelope({
        ...common,
        type: EVENT_TYPES.INVOCATION_RESCHEDULED,
        payload: create(InvocationRescheduledSchema, { scheduledFor: timestampFromDate(new Date(data.scheduledFor)) }),
      });
    case 'InvocationCancelled':
      return newEnvelope({ ...common, type: EVENT_TYPES.INVOCATION_CANCELLED, payload: create(InvocationCancelledSchema, {}) });
    case 'InvocationResumed':
      return newEnvelope({ ...common, type: EVENT_TYPES.INVOCATION_RESUMED, payload: create(InvocationResumedSchema, { attempt: data.attempt }) });
    case 'InvocationStarted':
      return newEnvelope({
        ...common,
        type: EVENT_TYPES.INVOCATION_STARTED,
        payload: create(InvocationStartedSchema, { attempt: data.attempt, request: data.request && requestInfo(data.request) }),
      });
    case 'InvocationSucceeded':
      return newEnvelope({
        ...common,
        type: EVENT_TYPES.INVOCATION_SUCCEEDED,
        payload: create(InvocationSucceededSchema, {
          resultJson: json(data.result),
          stepsJson: json(data.steps),
          messagesJson: messagesJson(data.messages),
          traceJson: json(data.trace),
          durationMs: BigInt(data.durationMs),
        }),
      });
    case 'InvocationFailed':
      return newEnvelope({
        ...common,
        type: EVENT_TYPES.INVOCATION_FAILED,
        payload: create(InvocationFailedSchema, {
          errorMessage: data.errorMessage,
          kind: FAILURE_KINDS[data.kind],
          stepsJson: json(data.steps),
          messagesJson: messagesJson(data.messages),
          traceJson: json(data.trace),
          durationMs: BigInt(data.durationMs),
          request: data.request && requestInfo(data.request),
          attempt: data.attempt,
        }),
      });
    case 'InvocationTimedOut':
      return newEnvelope({
        ...common,
        type: EVENT_TYPES.INVOCATION_TIMED_OUT,
        payload: create(InvocationTimedOutSchema, {
          errorMessage: data.errorMessage,
          stepsJson: json(data.steps),
          messagesJson: messagesJson(data.messages),
          traceJson: json(data.trace),
          durationMs: BigInt(data.durationMs),
        }),
      });
    case 'InvocationSuspended':
      return newEnvelope({
        ...common,
        type: EVENT_TYPES.INVOCATION_SUSPENDED,
        payload: create(InvocationSuspendedSchema, {
          stepsJson: json(data.steps),
          messagesJson: messagesJson(data.messages),
          traceJson: json(data.trace),
          pendingApprovalJson: data.pendingApproval === null ? '' : json(data.pendingApproval),
          resumeAt: data.resumeAt === null ? undefined : timestampFromDate(new Date(data.resumeAt)),
        }),
      });
    case 'InvocationRetryScheduled':
      return newEnvelope({
        ...common,
        type: EVENT_TYPES.INVOCATION_RETRY_SCHEDULED,
        payload: create(InvocationRetryScheduledSchema, {
          failedAttempt: data.failedAttempt,
          errorMessage: data.errorMessage,
          retryAt: timestampFromDate(new Date(data.retryAt)),
          stepsJson: json(data.steps),
          messagesJson: messagesJson(data.messages),
          traceJson: json(data.trace),
        }),
      });
    case 'InvocationApprovalDecided':
      return newEnvelope({
        ...common,
        type: EVENT_TYPES.INVOCATION_APPROVAL_DECIDED,
        payload: create(InvocationApprovalDecidedSchema, {
          nodeId: data.nodeId,
          decision: APPROVAL_DECISIONS[data.decision],
          decidedBy: data.decidedBy,
          decidedAt: timestampFromDate(new Date(data.decidedAt)),
          ...(data.comment === null ? {} : { comment: data.comment }),
        }),
      });
    case 'InvocationRetriesExhausted':
      return newEnvelope({
        ...common,
        type: EVENT_TYPES.INVOCATION_RETRIES_EXHAUSTED,
        payload: create(InvocationRetriesExhaustedSchema, {
          requestPayloadJson: json(data.requestPayload),
          sealedRequestJson: data.sealedRequest,
          failureReason: data.failureReason,
          attemptCount: data.attemptCount,
          triggerKey: data.triggerKey,
          source: 'automation',
          targetType: 'FLOW',
        }),
      });
  }
}

/** An attempt's messages as the events carry them: empty text for an event recorded before they were (the streams then fall back on the result). */
function messagesJson(messages: string[] | undefined): string {
  return messages === undefined ? '' : JSON.stringify(messages);
}

function requestInfo(request: RequestInfo): InvocationRequestInfo {
  return create(InvocationRequestInfoSchema, {
    target: RUN_TARGETS[request.targetType],
    mode: RUN_MODES[request.mode],
    triggerSource: request.triggerSource,
    environment: request.environment,
    requestPayloadJson: JSON.stringify(request.requestPayload),
    enrollmentPolicy: request.enrollmentPolicy ?? '',
    onErrorPolicy: request.onErrorPolicy,
    startedByTokenId: request.startedByTokenId ?? '',
    definitionVersion: request.definitionVersion,
    sessionId: request.sessionId ?? '',
    maxAttempts: request.maxAttempts,
    ...(request.schedule ? { scheduleFire: { scheduleId: request.schedule.id, scheduledTime: timestampFromDate(new Date(request.schedule.scheduledTime)) } } : {}),
  });
}
