/**
 * The event registry: every wire type name, the protobuf schema of its payload, and the
 * subject it is published on.
 *
 * Wire type names are explicit, versioned strings (`<domain>.<Message>.v<N>`), never derived
 * from a message or class name, so renaming a message in code never changes the wire.
 *
 * WARNING: like subjects, these names are persistent (stored in outboxes, event stores and
 * streams). Never rename or remove one; a new shape of an event is a new message with a new
 * type (`….v2`), registered beside the old one.
 */
import type { DescMessage, MessageShape } from '@bufbuild/protobuf';
import {
  ApiTokenRevokedSchema,
  DefinitionPublishedSchema,
  InboundHookRevokedSchema,
  OrganizationCreatedSchema,
  OrganizationPlanChangedSchema,
  ProjectApiSettingsChangedSchema,
  ProjectCreatedSchema,
  ProjectDeletedSchema,
} from './gen/runline/gateway/v1/events_pb.js';
import { RunInvocationSchema } from './gen/runline/invocation/v1/commands_pb.js';
import {
  InvocationApprovalDecidedSchema,
  InvocationCancelledSchema,
  InvocationFailedSchema,
  InvocationQueuedSchema,
  InvocationRescheduledSchema,
  InvocationResumedSchema,
  InvocationScheduledSchema,
  InvocationRetriesExhaustedSchema,
  InvocationRetryScheduledSchema,
  InvocationStartedSchema,
  InvocationSucceededSchema,
  InvocationSuspendedSchema,
  InvocationTimedOutSchema,
} from './gen/runline/invocation/v1/events_pb.js';
import { DeliverCallbackSchema } from './gen/runline/callback/v1/commands_pb.js';
import { CallbackAttemptedSchema } from './gen/runline/callback/v1/events_pb.js';
import { PolledItemRunFailedSchema, PollFailedSchema } from './gen/runline/polling/v1/events_pb.js';
import { HookDeliveryRejectedSchema } from './gen/runline/webhook/v1/events_pb.js';
import { FireRunEndedSchema, ScheduleJobSchema } from './gen/runline/scheduler/v1/commands_pb.js';
import {
  ScheduledJobCancelledSchema,
  ScheduledJobFiredSchema,
  ScheduledJobRescheduledSchema,
} from './gen/runline/scheduler/v1/events_pb.js';
import {
  CALLBACK_COMMAND_SUBJECTS,
  CALLBACK_EVENT_SUBJECTS,
  GATEWAY_EVENT_SUBJECTS,
  INVOCATION_COMMAND_SUBJECTS,
  INVOCATION_EVENT_SUBJECTS,
  POLLING_EVENT_SUBJECTS,
  SCHEDULER_COMMAND_SUBJECTS,
  SCHEDULER_EVENT_SUBJECTS,
  WEBHOOK_EVENT_SUBJECTS,
} from './subjects.js';

/** Wire type names (the value of `Envelope.type`) of every registered event. */
export const EVENT_TYPES = Object.freeze({
  ORGANIZATION_CREATED: 'gateway.OrganizationCreated.v1',
  ORGANIZATION_PLAN_CHANGED: 'gateway.OrganizationPlanChanged.v1',
  PROJECT_CREATED: 'gateway.ProjectCreated.v1',
  PROJECT_API_SETTINGS_CHANGED: 'gateway.ProjectApiSettingsChanged.v1',
  DEFINITION_PUBLISHED: 'gateway.DefinitionPublished.v1',
  API_TOKEN_REVOKED: 'gateway.ApiTokenRevoked.v1',
  PROJECT_DELETED: 'gateway.ProjectDeleted.v1',
  INBOUND_HOOK_REVOKED: 'gateway.InboundHookRevoked.v1',
  INVOCATION_QUEUED: 'invocation.InvocationQueued.v1',
  INVOCATION_STARTED: 'invocation.InvocationStarted.v1',
  INVOCATION_SUCCEEDED: 'invocation.InvocationSucceeded.v1',
  INVOCATION_FAILED: 'invocation.InvocationFailed.v1',
  INVOCATION_TIMED_OUT: 'invocation.InvocationTimedOut.v1',
  INVOCATION_SUSPENDED: 'invocation.InvocationSuspended.v1',
  INVOCATION_RETRY_SCHEDULED: 'invocation.InvocationRetryScheduled.v1',
  INVOCATION_RETRIES_EXHAUSTED: 'invocation.InvocationRetriesExhausted.v1',
  INVOCATION_SCHEDULED: 'invocation.InvocationScheduled.v1',
  INVOCATION_RESCHEDULED: 'invocation.InvocationRescheduled.v1',
  INVOCATION_CANCELLED: 'invocation.InvocationCancelled.v1',
  INVOCATION_RESUMED: 'invocation.InvocationResumed.v1',
  INVOCATION_APPROVAL_DECIDED: 'invocation.InvocationApprovalDecided.v1',
  /** A work-queue command, registered like an event: it travels in an envelope too. */
  RUN_INVOCATION: 'invocation.RunInvocation.v1',
  SCHEDULED_JOB_FIRED: 'scheduler.ScheduledJobFired.v1',
  SCHEDULED_JOB_CANCELLED: 'scheduler.ScheduledJobCancelled.v1',
  SCHEDULED_JOB_RESCHEDULED: 'scheduler.ScheduledJobRescheduled.v1',
  SCHEDULE_JOB: 'scheduler.ScheduleJob.v1',
  FIRE_RUN_ENDED: 'scheduler.FireRunEnded.v1',
  POLL_FAILED: 'polling.PollFailed.v1',
  POLLED_ITEM_RUN_FAILED: 'polling.PolledItemRunFailed.v1',
  HOOK_DELIVERY_REJECTED: 'webhook.HookDeliveryRejected.v1',
  /** A work-queue command for the callback service. */
  DELIVER_CALLBACK: 'callback.DeliverCallback.v1',
  CALLBACK_ATTEMPTED: 'callback.CallbackAttempted.v1',
} as const);

/** What the registry knows about one wire type. */
export interface EventRegistration<Schema extends DescMessage = DescMessage> {
  /** Generated schema of the payload (`Envelope.payload` is this message, binary encoded). */
  readonly schema: Schema;
  /** Logical subject the event is published on (see `subjects.ts`). */
  readonly subject: string;
}

/**
 * Wire type → registration. To add an event: define the message in a proto, regenerate,
 * add its name to `EVENT_TYPES`, its subject to `subjects.ts`, and an entry here.
 */
export const EVENT_REGISTRY = Object.freeze({
  [EVENT_TYPES.ORGANIZATION_CREATED]: {
    schema: OrganizationCreatedSchema,
    subject: GATEWAY_EVENT_SUBJECTS.ORGANIZATION_CREATED,
  },
  [EVENT_TYPES.ORGANIZATION_PLAN_CHANGED]: {
    schema: OrganizationPlanChangedSchema,
    subject: GATEWAY_EVENT_SUBJECTS.ORGANIZATION_PLAN_CHANGED,
  },
  [EVENT_TYPES.PROJECT_CREATED]: {
    schema: ProjectCreatedSchema,
    subject: GATEWAY_EVENT_SUBJECTS.PROJECT_CREATED,
  },
  [EVENT_TYPES.PROJECT_API_SETTINGS_CHANGED]: {
    schema: ProjectApiSettingsChangedSchema,
    subject: GATEWAY_EVENT_SUBJECTS.PROJECT_API_SETTINGS_CHANGED,
  },
  [EVENT_TYPES.DEFINITION_PUBLISHED]: {
    schema: DefinitionPublishedSchema,
    subject: GATEWAY_EVENT_SUBJECTS.DEFINITION_PUBLISHED,
  },
  [EVENT_TYPES.API_TOKEN_REVOKED]: {
    schema: ApiTokenRevokedSchema,
    subject: GATEWAY_EVENT_SUBJECTS.API_TOKEN_REVOKED,
  },
  [EVENT_TYPES.PROJECT_DELETED]: {
    schema: ProjectDeletedSchema,
    subject: GATEWAY_EVENT_SUBJECTS.PROJECT_DELETED,
  },
  [EVENT_TYPES.INBOUND_HOOK_REVOKED]: {
    schema: InboundHookRevokedSchema,
    subject: GATEWAY_EVENT_SUBJECTS.INBOUND_HOOK_REVOKED,
  },
  [EVENT_TYPES.INVOCATION_QUEUED]: { schema: InvocationQueuedSchema, subject: INVOCATION_EVENT_SUBJECTS.INVOCATION_QUEUED },
  [EVENT_TYPES.INVOCATION_STARTED]: { schema: InvocationStartedSchema, subject: INVOCATION_EVENT_SUBJECTS.INVOCATION_STARTED },
  [EVENT_TYPES.INVOCATION_SUCCEEDED]: { schema: InvocationSucceededSchema, subject: INVOCATION_EVENT_SUBJECTS.INVOCATION_SUCCEEDED },
  [EVENT_TYPES.INVOCATION_FAILED]: { schema: InvocationFailedSchema, subject: INVOCATION_EVENT_SUBJECTS.INVOCATION_FAILED },
  [EVENT_TYPES.INVOCATION_TIMED_OUT]: { schema: InvocationTimedOutSchema, subject: INVOCATION_EVENT_SUBJECTS.INVOCATION_TIMED_OUT },
  [EVENT_TYPES.INVOCATION_SUSPENDED]: { schema: InvocationSuspendedSchema, subject: INVOCATION_EVENT_SUBJECTS.INVOCATION_SUSPENDED },
  [EVENT_TYPES.INVOCATION_RETRY_SCHEDULED]: {
    schema: InvocationRetryScheduledSchema,
    subject: INVOCATION_EVENT_SUBJECTS.INVOCATION_RETRY_SCHEDULED,
  },
  [EVENT_TYPES.INVOCATION_RETRIES_EXHAUSTED]: {
    schema: InvocationRetriesExhaustedSchema,
    subject: INVOCATION_EVENT_SUBJECTS.INVOCATION_RETRIES_EXHAUSTED,
  },
  [EVENT_TYPES.INVOCATION_SCHEDULED]: { schema: InvocationScheduledSchema, subject: INVOCATION_EVENT_SUBJECTS.INVOCATION_SCHEDULED },
  [EVENT_TYPES.INVOCATION_RESCHEDULED]: { schema: InvocationRescheduledSchema, subject: INVOCATION_EVENT_SUBJECTS.INVOCATION_RESCHEDULED },
  [EVENT_TYPES.INVOCATION_CANCELLED]: { schema: InvocationCancelledSchema, subject: INVOCATION_EVENT_SUBJECTS.INVOCATION_CANCELLED },
  [EVENT_TYPES.INVOCATION_RESUMED]: { schema: InvocationResumedSchema, subject: INVOCATION_EVENT_SUBJECTS.INVOCATION_RESUMED },
  [EVENT_TYPES.INVOCATION_APPROVAL_DECIDED]: {
    schema: InvocationApprovalDecidedSchema,
    subject: INVOCATION_EVENT_SUBJECTS.INVOCATION_APPROVAL_DECIDED,
  },
  [EVENT_TYPES.RUN_INVOCATION]: { schema: RunInvocationSchema, subject: INVOCATION_COMMAND_SUBJECTS.RUN_INVOCATION },
  [EVENT_TYPES.SCHEDULED_JOB_FIRED]: { schema: ScheduledJobFiredSchema, subject: SCHEDULER_EVENT_SUBJECTS.SCHEDULED_JOB_FIRED },
  [EVENT_TYPES.SCHEDULED_JOB_CANCELLED]: { schema: ScheduledJobCancelledSchema, subject: SCHEDULER_EVENT_SUBJECTS.SCHEDULED_JOB_CANCELLED },
  [EVENT_TYPES.SCHEDULED_JOB_RESCHEDULED]: {
    schema: ScheduledJobRescheduledSchema,
    subject: SCHEDULER_EVENT_SUBJECTS.SCHEDULED_JOB_RESCHEDULED,
  },
  [EVENT_TYPES.SCHEDULE_JOB]: { schema: ScheduleJobSchema, subject: SCHEDULER_COMMAND_SUBJECTS.SCHEDULE_JOB },
  [EVENT_TYPES.FIRE_RUN_ENDED]: { schema: FireRunEndedSchema, subject: SCHEDULER_COMMAND_SUBJECTS.FIRE_RUN_ENDED },
  [EVENT_TYPES.POLL_FAILED]: { schema: PollFailedSchema, subject: POLLING_EVENT_SUBJECTS.POLL_FAILED },
  [EVENT_TYPES.POLLED_ITEM_RUN_FAILED]: { schema: PolledItemRunFailedSchema, subject: POLLING_EVENT_SUBJECTS.POLLED_ITEM_RUN_FAILED },
  [EVENT_TYPES.HOOK_DELIVERY_REJECTED]: { schema: HookDeliveryRejectedSchema, subject: WEBHOOK_EVENT_SUBJECTS.HOOK_DELIVERY_REJECTED },
  [EVENT_TYPES.DELIVER_CALLBACK]: { schema: DeliverCallbackSchema, subject: CALLBACK_COMMAND_SUBJECTS.DELIVER_CALLBACK },
  [EVENT_TYPES.CALLBACK_ATTEMPTED]: { schema: CallbackAttemptedSchema, subject: CALLBACK_EVENT_SUBJECTS.CALLBACK_ATTEMPTED },
} as const satisfies Record<string, EventRegistration>);

/** A registered wire type name. */
export type EventType = keyof typeof EVENT_REGISTRY;

/** The generated payload message of wire type `T`. */
export type EventPayload<T extends EventType> = MessageShape<(typeof EVENT_REGISTRY)[T]['schema']>;

/**
 * A decoded payload tagged with its wire type: a discriminated union, so a `switch` on
 * `type` narrows `payload` and can be checked for exhaustiveness.
 */
export type UnpackedEvent = { [T in EventType]: { type: T; payload: EventPayload<T> } }[EventType];

/** Thrown for a wire type that is not in the registry. */
export class UnknownEventTypeError extends Error {
  constructor(readonly type: string) {
    super(`unknown event type "${type}"`);
    this.name = 'UnknownEventTypeError';
  }
}

/** True when `type` is registered. A consumer may use it to skip types it marks ignorable. */
export function isEventType(type: string): type is EventType {
  return Object.hasOwn(EVENT_REGISTRY, type);
}

/** The registration of `type`; throws `UnknownEventTypeError` when it is not registered. */
export function eventRegistration(type: string): EventRegistration {
  if (!isEventType(type)) throw new UnknownEventTypeError(type);
  return EVENT_REGISTRY[type];
}
