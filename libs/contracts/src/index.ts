/**
 * `@runline/contracts`: everything that crosses a service boundary on the bus.
 *
 * - **Names** (`subjects.ts`): streams, subjects and the `STREAMS` every service ensures at
 *   start. Persistent names: renaming one needs a migration.
 * - **Event registry** (`event-registry.ts`): explicit wire type names (`EVENT_TYPES`), each
 *   mapped to its generated payload schema and its subject.
 * - **Envelope** (`envelope.ts`): build (`newEnvelope`, `causedBy`), encode/decode with
 *   validation (`encodeEnvelope`, `decodeEnvelope`, `envelopeCodec`), unpack the payload
 *   (`unpackPayload`, `unpackPayloadAs`) and turn an envelope into a `BusMessage`
 *   (`toBusMessage`).
 * - **Ids** (`ids.ts`): `isUuid`, the one check that an id is a UUID (either case, any
 *   version), and `UUID_TEXT`, its lower-case pattern to compose stricter ones from.
 * - **Generated messages** from `proto/runline/**` (buf + protoc-gen-es, under `gen/`, never
 *   edited by hand): each message's type and its `…Schema`, enums and their schemas.
 * - **protobuf-es runtime**: `create`, `toBinary`, `fromBinary`, and the Timestamp helpers,
 *   re-exported so services depend on this one package for the wire.
 *
 * Typical producer (inside the transaction that changes state, via the outbox):
 * ```ts
 * const envelope = newEnvelope({
 *   type: EVENT_TYPES.PROJECT_CREATED,
 *   payload: create(ProjectCreatedSchema, { orgId, projectId, name, type: ProjectType.CHATBOT }),
 *   orgId,
 *   projectId,
 * });
 * outbox.add(toBusMessage(envelope));
 * ```
 * Typical consumer:
 * ```ts
 * const event = unpackPayload(envelopeCodec.decode(message.data));
 * switch (event.type) {
 *   case EVENT_TYPES.PROJECT_CREATED: return projects.insert(event.payload);
 *   // …
 * }
 * ```
 */

// Names.
export {
  CALLBACK_COMMAND_SUBJECTS,
  CALLBACK_COMMANDS_STREAM,
  CALLBACK_EVENT_SUBJECTS,
  CALLBACK_EVENTS_STREAM,
  GATEWAY_EVENT_SUBJECTS,
  GATEWAY_EVENTS_STREAM,
  INVOCATION_COMMANDS_STREAM,
  INVOCATION_COMMAND_SUBJECTS,
  INVOCATION_EVENT_SUBJECTS,
  INVOCATION_EVENTS_STREAM,
  INVOCATION_QUERY_SUBJECTS,
  INVOCATION_LIVE_SUBJECTS,
  INVOCATION_REQUEST_SUBJECTS,
  SCHEDULER_COMMAND_SUBJECTS,
  SCHEDULER_COMMANDS_STREAM,
  SCHEDULER_EVENT_SUBJECTS,
  SCHEDULER_EVENTS_STREAM,
  SCHEDULER_QUERY_SUBJECTS,
  SCHEDULER_REQUEST_SUBJECTS,
  POLLING_EVENT_SUBJECTS,
  POLLING_EVENTS_STREAM,
  POLLING_QUERY_SUBJECTS,
  POLLING_REQUEST_SUBJECTS,
  PROJECT_CHANGE_SUBJECTS,
  DEAD_LETTER_QUERY_SUBJECTS,
  DEAD_LETTER_REQUEST_SUBJECTS,
  STREAM_NAMES,
  STREAM_SUBJECTS,
  STREAMS,
  WEBHOOK_EVENT_SUBJECTS,
  WEBHOOK_EVENTS_STREAM,
  WEBHOOK_QUERY_SUBJECTS,
  WEBHOOK_REQUEST_SUBJECTS,
  type StreamName,
} from './subjects.js';

// Event registry.
export {
  EVENT_REGISTRY,
  EVENT_TYPES,
  eventRegistration,
  isEventType,
  UnknownEventTypeError,
  type EventPayload,
  type EventRegistration,
  type EventType,
  type UnpackedEvent,
} from './event-registry.js';

// Envelope.
export {
  assertValidEnvelope,
  causedBy,
  decodeEnvelope,
  encodeEnvelope,
  envelopeCodec,
  InvalidEnvelopeError,
  newEnvelope,
  toBusMessage,
  type WireMessage,
  UnexpectedEventTypeError,
  unpackPayload,
  unpackPayloadAs,
  type EnvelopeCodec,
  type NewEnvelopeInput,
} from './envelope.js';

// Ids: the one UUID check.
export { isUuid, UUID_TEXT } from './ids.js';

// Generated: runline.common.v1.
export { EnvelopeSchema, type Envelope } from './gen/runline/common/v1/envelope_pb.js';

// Generated: runline.gateway.v1 events.
export {
  ApiTokenRevokedSchema,
  DefinitionPublishedSchema,
  EnrollmentPolicy,
  InboundHookRevokedSchema,
  EnrollmentPolicySchema,
  OnErrorPolicy,
  OnErrorPolicySchema,
  OrganizationCreatedSchema,
  OrganizationPlanChangedSchema,
  ProjectApiSettingsChangedSchema,
  ProjectCreatedSchema,
  ProjectDeletedSchema,
  ProjectType,
  ProjectTypeSchema,
  type ApiTokenRevoked,
  type DefinitionPublished,
  type InboundHookRevoked,
  type OrganizationCreated,
  type OrganizationPlanChanged,
  type ProjectApiSettingsChanged,
  type ProjectCreated,
  type ProjectDeleted,
} from './gen/runline/gateway/v1/events_pb.js';
export { GatewayChangeAppliedSchema, type GatewayChangeApplied } from './gen/runline/gateway/v1/propagation_pb.js';

// Generated: runline.invocation.v1 queries.
export {
  GetInvocationReplySchema,
  GetInvocationRequestSchema,
  type GetInvocationReply,
  type GetInvocationRequest,
} from './gen/runline/invocation/v1/queries_pb.js';
export {
  GetQuotaUsageReplySchema,
  GetQuotaUsageRequestSchema,
  type GetQuotaUsageReply,
  type GetQuotaUsageRequest,
  GetInvocationMetricsReplySchema,
  GetInvocationMetricsRequestSchema,
  ListInvocationLogsReplySchema,
  ListInvocationLogsRequestSchema,
  type GetInvocationMetricsReply,
  type GetInvocationMetricsRequest,
  type ListInvocationLogsReply,
  type ListInvocationLogsRequest,
} from './gen/runline/invocation/v1/queries_pb.js';
export { RunProgressSchema, type RunProgress } from './gen/runline/invocation/v1/live_pb.js';
export {
  ListInvocationEventsReplySchema,
  ListInvocationEventsRequestSchema,
  type ListInvocationEventsReply,
  type ListInvocationEventsRequest,
} from './gen/runline/invocation/v1/queries_pb.js';

// Generated: runline.invocation.v1 commands and events.
export {
  ApprovalDecision,
  DecideApprovalOutcome,
  DecideApprovalReplySchema,
  DecideApprovalRequestSchema,
  ModifyAction,
  ModifyInvocationReplySchema,
  ModifyInvocationRequestSchema,
  ModifyOutcome,
  RunInvocationSchema,
  RunMode,
  RunTarget,
  StartInvocationReplySchema,
  StartInvocationRequestSchema,
  ScheduleFireSchema,
  type ScheduleFire,
  type DecideApprovalReply,
  type DecideApprovalRequest,
  type ModifyInvocationReply,
  type ModifyInvocationRequest,
  type RunInvocation,
  type StartInvocationReply,
  type StartInvocationRequest,
} from './gen/runline/invocation/v1/commands_pb.js';
export {
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
  type InvocationApprovalDecided,
  type InvocationFailed,
  type InvocationQueued,
  type InvocationRequestInfo,
  type InvocationRetriesExhausted,
  type InvocationRetryScheduled,
  type InvocationStarted,
  type InvocationSucceeded,
  type InvocationSuspended,
  type InvocationTimedOut,
  type InvocationCancelled,
  type InvocationRescheduled,
  type InvocationResumed,
  type InvocationScheduled,
} from './gen/runline/invocation/v1/events_pb.js';

// Generated: runline.scheduler.v1 commands and events.
export {
  CancelJobReplySchema,
  CancelJobRequestSchema,
  FireRunEndedSchema,
  JobChangeOutcome,
  JobKind,
  RescheduleJobReplySchema,
  RescheduleJobRequestSchema,
  ScheduleJobSchema,
  type CancelJobReply,
  type CancelJobRequest,
  type FireRunEnded,
  type RescheduleJobReply,
  type RescheduleJobRequest,
  type ScheduleJob,
} from './gen/runline/scheduler/v1/commands_pb.js';
export {
  ScheduledJobCancelledSchema,
  ScheduledJobFiredSchema,
  ScheduledJobRescheduledSchema,
  type ScheduledJobCancelled,
  type ScheduledJobFired,
  type ScheduledJobRescheduled,
} from './gen/runline/scheduler/v1/events_pb.js';
export {
  BackfillScheduleReplySchema,
  BackfillScheduleRequestSchema,
  ChangeScheduleReplySchema,
  ChangeScheduleRequestSchema,
  ListSchedulesReplySchema,
  ListSchedulesRequestSchema,
  ScheduleChange,
  ScheduleRunOutcome,
  TriggerScheduleReplySchema,
  TriggerScheduleRequestSchema,
  type BackfillScheduleReply,
  type BackfillScheduleRequest,
  type ChangeScheduleReply,
  type ChangeScheduleRequest,
  type ListSchedulesReply,
  type ListSchedulesRequest,
  type TriggerScheduleReply,
  type TriggerScheduleRequest,
} from './gen/runline/scheduler/v1/schedules_pb.js';

// Generated: runline.polling.v1 requests and events (polling triggers and their failures).
export {
  DeletePollingTriggerReplySchema,
  DeletePollingTriggerRequestSchema,
  ListPollingTriggersReplySchema,
  ListPollingTriggersRequestSchema,
  RegisterPollingTriggerReplySchema,
  RegisterPollingTriggerRequestSchema,
  type DeletePollingTriggerReply,
  type DeletePollingTriggerRequest,
  type ListPollingTriggersReply,
  type ListPollingTriggersRequest,
  type RegisterPollingTriggerReply,
  type RegisterPollingTriggerRequest,
} from './gen/runline/polling/v1/requests_pb.js';
export { PolledItemRunFailedSchema, PollFailedSchema, type PolledItemRunFailed, type PollFailed } from './gen/runline/polling/v1/events_pb.js';

// Generated: runline.deadletter.v1 requests (listing and replaying dead letters).
export {
  BulkReplayDeadLettersReplySchema,
  BulkReplayDeadLettersRequestSchema,
  type BulkReplayDeadLettersReply,
  type BulkReplayDeadLettersRequest,
} from './gen/runline/deadletter/v1/requests_pb.js';
export {
  ListDeadLettersReplySchema,
  ListDeadLettersRequestSchema,
  ReplayDeadLetterReplySchema,
  ReplayDeadLetterRequestSchema,
  ReplayOutcome,
  type ListDeadLettersReply,
  type ListDeadLettersRequest,
  type ReplayDeadLetterReply,
  type ReplayDeadLetterRequest,
} from './gen/runline/deadletter/v1/requests_pb.js';

// Generated: runline.webhook.v1 requests and events (inbound hooks).
export {
  CreateInboundHookReplySchema,
  CreateInboundHookRequestSchema,
  DeliveryVerdict,
  GetHookForGatewayReplySchema,
  GetHookForGatewayRequestSchema,
  InboundHookCopySchema,
  InboundHookSchema,
  ListInboundHooksReplySchema,
  ListInboundHooksRequestSchema,
  RecordRejectedDeliveryReplySchema,
  RecordRejectedDeliveryRequestSchema,
  RevokeHookOutcome,
  RevokeInboundHookReplySchema,
  RevokeInboundHookRequestSchema,
  VerifyDeliveryReplySchema,
  VerifyDeliveryRequestSchema,
  type CreateInboundHookReply,
  type CreateInboundHookRequest,
  type GetHookForGatewayReply,
  type GetHookForGatewayRequest,
  type InboundHook,
  type InboundHookCopy,
  type ListInboundHooksReply,
  type ListInboundHooksRequest,
  type RecordRejectedDeliveryReply,
  type RecordRejectedDeliveryRequest,
  type RevokeInboundHookReply,
  type RevokeInboundHookRequest,
  type VerifyDeliveryReply,
  type VerifyDeliveryRequest,
} from './gen/runline/webhook/v1/requests_pb.js';
export { HookDeliveryRejectedSchema, type HookDeliveryRejected } from './gen/runline/webhook/v1/events_pb.js';

// Generated: runline.webhook.v1 managed provider subscriptions.
export {
  CreateWebhookSubscriptionReplySchema,
  CreateWebhookSubscriptionRequestSchema,
  ListWebhookSubscriptionsReplySchema,
  ListWebhookSubscriptionsRequestSchema,
  RetrySubscriptionOutcome,
  RetryWebhookSubscriptionReplySchema,
  RetryWebhookSubscriptionRequestSchema,
  RevokeSubscriptionOutcome,
  RevokeWebhookSubscriptionReplySchema,
  RevokeWebhookSubscriptionRequestSchema,
  WebhookSubscriptionSchema,
  type CreateWebhookSubscriptionReply,
  type CreateWebhookSubscriptionRequest,
  type ListWebhookSubscriptionsReply,
  type ListWebhookSubscriptionsRequest,
  type RetryWebhookSubscriptionReply,
  type RetryWebhookSubscriptionRequest,
  type RevokeWebhookSubscriptionReply,
  type RevokeWebhookSubscriptionRequest,
  type WebhookSubscription,
} from './gen/runline/webhook/v1/subscriptions_pb.js';

// Generated: runline.callback.v1 commands and events.
export { DeliverCallbackSchema, type DeliverCallback } from './gen/runline/callback/v1/commands_pb.js';
export {
  CallbackAttemptedSchema,
  CallbackAttemptOutcome,
  type CallbackAttempted,
} from './gen/runline/callback/v1/events_pb.js';

// protobuf-es runtime, so services import the wire from one place.
// What a StartInvocation reply without a run means, for callers with no HTTP answer to give.
export { notStartedReason, QUOTA_EXCEEDED_MESSAGE, QUOTA_UNAVAILABLE_MESSAGE } from './start-invocation-outcome.js';

export { create, fromBinary, toBinary, type MessageInitShape, type MessageShape } from '@bufbuild/protobuf';
export { timestampDate, timestampFromDate, timestampNow, type Timestamp } from '@bufbuild/protobuf/wkt';
