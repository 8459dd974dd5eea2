/**
 * The events of one run, as the invocation service stores them (event store rows, JSON) and
 * folds them into the read model. `invocation-event.codec.ts` turns each into its protobuf
 * envelope for the bus. Everything here is already redacted.
 */
import type { JsonValue } from '@runline/engine';

export type TargetType = 'BOT' | 'FLOW' | 'AUTOMATION';
export type RunModeName = 'SYNC' | 'ASYNC';
export type TriggerSource = 'WEBHOOK' | 'SCHEDULE' | 'POLLING' | 'REPLAY';
export type Environment = 'PRODUCTION' | 'TEST';
export type FailureKindName = 'RUN' | 'TRIGGER_CHECK' | 'INTERRUPTED' | 'EXTERNAL_API_DISABLED' | 'QUOTA_EXCEEDED' | 'PROJECT_DELETED';

/** What a run was asked to do; recorded by its first event. */
export interface RequestInfo {
  targetType: TargetType;
  mode: RunModeName;
  triggerSource: TriggerSource;
  environment: Environment;
  /** The request body, secrets redacted. */
  requestPayload: Record<string, JsonValue>;
  enrollmentPolicy: string | null;
  onErrorPolicy: string;
  startedByTokenId: string | null;
  definitionVersion: number;
  sessionId: string | null;
  maxAttempts: number;
  /** The Schedule trigger's fire that started the run (trigger source SCHEDULE); absent otherwise. */
  schedule?: { id: string; scheduledTime: string };
}

/** Steps, trace and duration of the attempt that ended. */
export interface AttemptRecord {
  steps: JsonValue[];
  trace: JsonValue;
  durationMs: number;
  /**
   * The messages the attempt said so far (a resumed run's carried ones included), redacted: the
   * run streams replay them where they were said. Absent on events recorded before it.
   */
  messages?: string[];
}

export type InvocationEventData =
  | { type: 'InvocationQueued'; request: RequestInfo }
  | { type: 'InvocationScheduled'; request: RequestInfo; scheduledFor: string; schedulerJobName: string }
  | { type: 'InvocationRescheduled'; scheduledFor: string }
  /** `errorMessage`: why, when not a scheduled run's job cancelled (a debounced run: `Debounced: superseded by <id>`). */
  | { type: 'InvocationCancelled'; errorMessage?: string }
  | { type: 'InvocationResumed'; attempt: number }
  | { type: 'InvocationStarted'; attempt: number; request?: RequestInfo }
  | ({ type: 'InvocationSucceeded'; result: JsonValue } & AttemptRecord)
  | ({ type: 'InvocationFailed'; errorMessage: string; kind: FailureKindName; attempt: number; request?: RequestInfo } & AttemptRecord)
  | ({ type: 'InvocationTimedOut'; errorMessage: string } & AttemptRecord)
  | ({ type: 'InvocationSuspended'; pendingApproval: JsonValue; resumeAt: string | null } & Omit<AttemptRecord, 'durationMs'>)
  | ({ type: 'InvocationRetryScheduled'; failedAttempt: number; errorMessage: string; retryAt: string } & Omit<AttemptRecord, 'durationMs'>)
  | {
      type: 'InvocationApprovalDecided';
      /** The approval node the run waits at. */
      nodeId: string;
      decision: 'approve' | 'reject';
      /** The deciding user (the console JWT's `sub`). */
      decidedBy: string;
      decidedAt: string;
      comment: string | null;
    }
  | {
      type: 'InvocationRetriesExhausted';
      requestPayload: Record<string, JsonValue>;
      /** The original request, sealed: the dead letter keeps it for a replay. */
      sealedRequest: string;
      failureReason: string;
      attemptCount: number;
      triggerKey: string;
    };

export type InvocationEventType = InvocationEventData['type'];

/** One stored event of one run. */
export interface InvocationEvent {
  /** Event id: the envelope id and the bus dedupe key. */
  id: string;
  invocationId: string;
  orgId: string;
  projectId: string;
  /** 1 for the run's first event, then +1 per event. */
  sequence: number;
  occurredAt: string;
  data: InvocationEventData;
}
