/**
 * Stream and subject names: the only place they are spelled.
 *
 * WARNING: these strings are persistent names. JetStream streams, durable consumers and the
 * messages already stored are bound to them, and other internal services subscribe to them.
 * Renaming or removing one needs a migration (create the new stream or subject, move or
 * drain the old one, then retire it); never edit a value in place. Adding names is safe.
 *
 * All names here are logical: a bus created with a prefix prepends it on the wire (see
 * `@runline/bus`). Subjects are `<domain>.<kind>.<kebab-case-name>` with kind `evt`
 * (events), `cmd` (work-queue commands), `req` (request/reply commands) or `qry`
 * (request/reply queries). `req` and `qry` subjects must stay outside every stream: a stream
 * that captured them would store each request and answer it with a publish acknowledgement.
 */
/**
 * A stream as the bus creates it. Declared here, not imported from `@runline/bus`, because
 * contracts depend on nothing of ours; the bus's `StreamSpec` has the same shape.
 */
export interface StreamSpec {
  name: string;
  subjects: string[];
  retention: 'limits' | 'workqueue';
  duplicateWindowSeconds?: number;
}

/** JetStream stream names. */
export const STREAM_NAMES = Object.freeze({
  /** Events published by the gateway (organizations, plans, projects, definitions, tokens, hooks revoked). */
  GATEWAY_EVENTS: 'GATEWAY_EVENTS',
  /** Events published by the invocation service (the life of a run). */
  INVOCATION_EVENTS: 'INVOCATION_EVENTS',
  /** Commands for the invocation service; a work queue, each command handled once. */
  INVOCATION_COMMANDS: 'INVOCATION_COMMANDS',
  /** Events published by the scheduler service (jobs fired, cancelled, moved). */
  SCHEDULER_EVENTS: 'SCHEDULER_EVENTS',
  /** Commands for the scheduler service; a work queue, each command handled once. */
  SCHEDULER_COMMANDS: 'SCHEDULER_COMMANDS',
  /** Events published by the polling service (failed polls, failed item runs). */
  POLLING_EVENTS: 'POLLING_EVENTS',
  /** Events published by the callback service (one per delivery attempt). */
  CALLBACK_EVENTS: 'CALLBACK_EVENTS',
  /** Commands for the callback service; a work queue, each command handled once. */
  CALLBACK_COMMANDS: 'CALLBACK_COMMANDS',
  /** Events published by the webhook service (deliveries the trigger checks rejected). */
  WEBHOOK_EVENTS: 'WEBHOOK_EVENTS',
} as const);

export type StreamName = (typeof STREAM_NAMES)[keyof typeof STREAM_NAMES];

/** Subject wildcards each stream captures; also the filter to consume a whole domain. */
export const STREAM_SUBJECTS = Object.freeze({
  GATEWAY_EVENTS: 'gateway.evt.>',
  INVOCATION_EVENTS: 'invocation.evt.>',
  INVOCATION_COMMANDS: 'invocation.cmd.>',
  SCHEDULER_EVENTS: 'scheduler.evt.>',
  SCHEDULER_COMMANDS: 'scheduler.cmd.>',
  POLLING_EVENTS: 'polling.evt.>',
  CALLBACK_EVENTS: 'callback.evt.>',
  CALLBACK_COMMANDS: 'callback.cmd.>',
  WEBHOOK_EVENTS: 'webhook.evt.>',
} as const);

/** One subject per gateway event type (see the event registry for the type names). */
export const GATEWAY_EVENT_SUBJECTS = Object.freeze({
  ORGANIZATION_CREATED: 'gateway.evt.organization-created',
  ORGANIZATION_PLAN_CHANGED: 'gateway.evt.organization-plan-changed',
  PROJECT_CREATED: 'gateway.evt.project-created',
  PROJECT_API_SETTINGS_CHANGED: 'gateway.evt.project-api-settings-changed',
  DEFINITION_PUBLISHED: 'gateway.evt.definition-published',
  API_TOKEN_REVOKED: 'gateway.evt.api-token-revoked',
  PROJECT_DELETED: 'gateway.evt.project-deleted',
  INBOUND_HOOK_REVOKED: 'gateway.evt.inbound-hook-revoked',
} as const);

/**
 * The gateway events that act on a project, each carrying the project's new `config_version`
 * (runline/gateway/v1/events.proto): what a service keeping its own copy of projects subscribes to.
 */
export const PROJECT_CHANGE_SUBJECTS: readonly string[] = Object.freeze([
  GATEWAY_EVENT_SUBJECTS.PROJECT_CREATED,
  GATEWAY_EVENT_SUBJECTS.PROJECT_API_SETTINGS_CHANGED,
  GATEWAY_EVENT_SUBJECTS.DEFINITION_PUBLISHED,
  GATEWAY_EVENT_SUBJECTS.API_TOKEN_REVOKED,
  GATEWAY_EVENT_SUBJECTS.INBOUND_HOOK_REVOKED,
  GATEWAY_EVENT_SUBJECTS.PROJECT_DELETED,
]);

/** One subject per invocation event type (runline/invocation/v1/events.proto). */
export const INVOCATION_EVENT_SUBJECTS = Object.freeze({
  INVOCATION_QUEUED: 'invocation.evt.invocation-queued',
  INVOCATION_STARTED: 'invocation.evt.invocation-started',
  INVOCATION_SUCCEEDED: 'invocation.evt.invocation-succeeded',
  INVOCATION_FAILED: 'invocation.evt.invocation-failed',
  INVOCATION_TIMED_OUT: 'invocation.evt.invocation-timed-out',
  INVOCATION_SUSPENDED: 'invocation.evt.invocation-suspended',
  INVOCATION_RETRY_SCHEDULED: 'invocation.evt.invocation-retry-scheduled',
  INVOCATION_RETRIES_EXHAUSTED: 'invocation.evt.invocation-retries-exhausted',
  INVOCATION_SCHEDULED: 'invocation.evt.invocation-scheduled',
  INVOCATION_RESCHEDULED: 'invocation.evt.invocation-rescheduled',
  INVOCATION_CANCELLED: 'invocation.evt.invocation-cancelled',
  INVOCATION_RESUMED: 'invocation.evt.invocation-resumed',
  INVOCATION_APPROVAL_DECIDED: 'invocation.evt.invocation-approval-decided',
} as const);

/** Work-queue commands for the invocation service (INVOCATION_COMMANDS stream). */
export const INVOCATION_COMMAND_SUBJECTS = Object.freeze({
  /** `RunInvocation` (runline/invocation/v1/commands.proto), in an envelope. */
  RUN_INVOCATION: 'invocation.cmd.run-invocation',
} as const);

/** Request/reply commands answered by the invocation service (core NATS, not JetStream). */
export const INVOCATION_REQUEST_SUBJECTS = Object.freeze({
  /** `StartInvocationRequest` → `StartInvocationReply` (runline/invocation/v1/commands.proto). */
  START_INVOCATION: 'invocation.req.start-invocation',
  /** `ModifyInvocationRequest` → `ModifyInvocationReply` (cancel or reschedule a SCHEDULED run). */
  MODIFY_INVOCATION: 'invocation.req.modify-invocation',
  /** A gateway event's `Envelope` → `GatewayChangeApplied` (runline/gateway/v1/propagation.proto). */
  APPLY_GATEWAY_CHANGE: 'invocation.req.apply-gateway-change',
  /** `DecideApprovalRequest` → `DecideApprovalReply` (approve or reject a run paused at an Approval node). */
  DECIDE_APPROVAL: 'invocation.req.decide-approval',
} as const);

/** One subject per scheduler event type (runline/scheduler/v1/events.proto). */
export const SCHEDULER_EVENT_SUBJECTS = Object.freeze({
  SCHEDULED_JOB_FIRED: 'scheduler.evt.scheduled-job-fired',
  SCHEDULED_JOB_CANCELLED: 'scheduler.evt.scheduled-job-cancelled',
  SCHEDULED_JOB_RESCHEDULED: 'scheduler.evt.scheduled-job-rescheduled',
} as const);

/** Work-queue commands for the scheduler service (SCHEDULER_COMMANDS stream). */
export const SCHEDULER_COMMAND_SUBJECTS = Object.freeze({
  /** `ScheduleJob` (runline/scheduler/v1/commands.proto), in an envelope. */
  SCHEDULE_JOB: 'scheduler.cmd.schedule-job',
  /** `FireRunEnded`: a run a schedule's fire started ended (sent only for those runs). */
  FIRE_RUN_ENDED: 'scheduler.cmd.fire-run-ended',
} as const);

/** Request/reply commands answered by the scheduler service (core NATS, not JetStream). */
export const SCHEDULER_REQUEST_SUBJECTS = Object.freeze({
  /** `CancelJobRequest` → `CancelJobReply`. */
  CANCEL_JOB: 'scheduler.req.cancel-job',
  /** `RescheduleJobRequest` → `RescheduleJobReply`. */
  RESCHEDULE_JOB: 'scheduler.req.reschedule-job',
  /** A gateway event's `Envelope` → `GatewayChangeApplied`: a publish's schedules are in force before it is answered. */
  APPLY_GATEWAY_CHANGE: 'scheduler.req.apply-gateway-change',
  /** `ChangeScheduleRequest` → `ChangeScheduleReply` (pause, resume; runline/scheduler/v1/schedules.proto). */
  CHANGE_SCHEDULE: 'scheduler.req.change-schedule',
  /** `TriggerScheduleRequest` → `TriggerScheduleReply` (one run of a schedule now). */
  TRIGGER_SCHEDULE: 'scheduler.req.trigger-schedule',
  /** `BackfillScheduleRequest` → `BackfillScheduleReply` (one run per fire time of a past range). */
  BACKFILL_SCHEDULE: 'scheduler.req.backfill-schedule',
} as const);

/** Request/reply queries answered by the scheduler service. */
export const SCHEDULER_QUERY_SUBJECTS = Object.freeze({
  /** `ListSchedulesRequest` → `ListSchedulesReply` (runline/scheduler/v1/schedules.proto). */
  LIST_SCHEDULES: 'scheduler.qry.list-schedules',
} as const);

/**
 * Live-only subjects of the invocation service (core NATS: no stream captures them, nothing is
 * stored or acknowledged; a listener that is not connected misses them).
 */
export const INVOCATION_LIVE_SUBJECTS = Object.freeze({
  /** `RunProgress` (runline/invocation/v1/live.proto): a step or message of a running run. */
  RUN_PROGRESS: 'invocation.live.run-progress',
} as const);

/** Request/reply subjects answered by the invocation service (core NATS, not JetStream). */
export const INVOCATION_QUERY_SUBJECTS = Object.freeze({
  /** `GetInvocationRequest` → `GetInvocationReply` (runline/invocation/v1/queries.proto). */
  GET_INVOCATION: 'invocation.qry.get-invocation',
  /** `GetQuotaUsageRequest` → `GetQuotaUsageReply` (runline/invocation/v1/queries.proto). */
  GET_QUOTA_USAGE: 'invocation.qry.get-quota-usage',
  /** `ListInvocationLogsRequest` → `ListInvocationLogsReply`: the console's logs. */
  LIST_INVOCATION_LOGS: 'invocation.qry.list-invocation-logs',
  /** `GetInvocationMetricsRequest` → `GetInvocationMetricsReply`: the console's invocation health. */
  GET_INVOCATION_METRICS: 'invocation.qry.get-invocation-metrics',
  /** `ListInvocationEventsRequest` → `ListInvocationEventsReply`: a run's recorded events (its stream's replay). */
  LIST_INVOCATION_EVENTS: 'invocation.qry.list-invocation-events',
} as const);

/** One subject per callback event type (runline/callback/v1/events.proto). */
export const CALLBACK_EVENT_SUBJECTS = Object.freeze({
  CALLBACK_ATTEMPTED: 'callback.evt.callback-attempted',
} as const);

/** Work-queue commands for the callback service (CALLBACK_COMMANDS stream). */
export const CALLBACK_COMMAND_SUBJECTS = Object.freeze({
  /** `DeliverCallback` (runline/callback/v1/commands.proto), in an envelope. */
  DELIVER_CALLBACK: 'callback.cmd.deliver-callback',
} as const);

/** One subject per polling event type (runline/polling/v1/events.proto). */
export const POLLING_EVENT_SUBJECTS = Object.freeze({
  POLL_FAILED: 'polling.evt.poll-failed',
  POLLED_ITEM_RUN_FAILED: 'polling.evt.polled-item-run-failed',
} as const);

/** Request/reply commands answered by the polling service (runline/polling/v1/requests.proto). */
export const POLLING_REQUEST_SUBJECTS = Object.freeze({
  /** `RegisterPollingTriggerRequest` → `RegisterPollingTriggerReply`. */
  REGISTER_POLLING_TRIGGER: 'polling.req.register-polling-trigger',
  /** `DeletePollingTriggerRequest` → `DeletePollingTriggerReply`. */
  DELETE_POLLING_TRIGGER: 'polling.req.delete-polling-trigger',
  /** A gateway event's `Envelope` → `GatewayChangeApplied` (runline/gateway/v1/propagation.proto). */
  APPLY_GATEWAY_CHANGE: 'polling.req.apply-gateway-change',
} as const);

/** Request/reply queries answered by the polling service. */
export const POLLING_QUERY_SUBJECTS = Object.freeze({
  /** `ListPollingTriggersRequest` → `ListPollingTriggersReply`. */
  LIST_POLLING_TRIGGERS: 'polling.qry.list-polling-triggers',
} as const);

/** Request/reply commands answered by the dead-letter service (runline/deadletter/v1/requests.proto). */
export const DEAD_LETTER_REQUEST_SUBJECTS = Object.freeze({
  /** `ReplayDeadLetterRequest` → `ReplayDeadLetterReply`. */
  REPLAY_DEAD_LETTER: 'dead-letter.req.replay-dead-letter',
  /** `BulkReplayDeadLettersRequest` → `BulkReplayDeadLettersReply`. */
  BULK_REPLAY_DEAD_LETTERS: 'dead-letter.req.bulk-replay-dead-letters',
} as const);

/** Request/reply queries answered by the dead-letter service. */
export const DEAD_LETTER_QUERY_SUBJECTS = Object.freeze({
  /** `ListDeadLettersRequest` → `ListDeadLettersReply`. */
  LIST_DEAD_LETTERS: 'dead-letter.qry.list-dead-letters',
} as const);

/** One subject per webhook event type (runline/webhook/v1/events.proto). */
export const WEBHOOK_EVENT_SUBJECTS = Object.freeze({
  HOOK_DELIVERY_REJECTED: 'webhook.evt.hook-delivery-rejected',
} as const);

/** Request/reply commands answered by the webhook service (runline/webhook/v1/requests.proto). */
export const WEBHOOK_REQUEST_SUBJECTS = Object.freeze({
  /** `CreateInboundHookRequest` → `CreateInboundHookReply`. */
  CREATE_INBOUND_HOOK: 'webhook.req.create-inbound-hook',
  /** `RevokeInboundHookRequest` → `RevokeInboundHookReply`. */
  REVOKE_INBOUND_HOOK: 'webhook.req.revoke-inbound-hook',
  /** `VerifyDeliveryRequest` → `VerifyDeliveryReply`: deliveries to ids that are not inbound hooks (managed subscriptions). */
  VERIFY_DELIVERY: 'webhook.req.verify-delivery',
  /** `RecordRejectedDeliveryRequest` → `RecordRejectedDeliveryReply`. */
  RECORD_REJECTED_DELIVERY: 'webhook.req.record-rejected-delivery',
  /** `CreateWebhookSubscriptionRequest` → `CreateWebhookSubscriptionReply` (subscriptions.proto). */
  CREATE_WEBHOOK_SUBSCRIPTION: 'webhook.req.create-webhook-subscription',
  /** `RetryWebhookSubscriptionRequest` → `RetryWebhookSubscriptionReply`. */
  RETRY_WEBHOOK_SUBSCRIPTION: 'webhook.req.retry-webhook-subscription',
  /** `RevokeWebhookSubscriptionRequest` → `RevokeWebhookSubscriptionReply`. */
  REVOKE_WEBHOOK_SUBSCRIPTION: 'webhook.req.revoke-webhook-subscription',
} as const);

/** Request/reply queries answered by the webhook service. */
export const WEBHOOK_QUERY_SUBJECTS = Object.freeze({
  /** `ListInboundHooksRequest` → `ListInboundHooksReply`. */
  LIST_INBOUND_HOOKS: 'webhook.qry.list-inbound-hooks',
  /** `GetHookForGatewayRequest` → `GetHookForGatewayReply`: the gateway's copy of a hook, loaded on a miss. */
  GET_HOOK_FOR_GATEWAY: 'webhook.qry.get-hook-for-gateway',
  /** `ListWebhookSubscriptionsRequest` → `ListWebhookSubscriptionsReply` (subscriptions.proto). */
  LIST_WEBHOOK_SUBSCRIPTIONS: 'webhook.qry.list-webhook-subscriptions',
} as const);

/** Events are kept (limits retention) so a new consumer or a rebuilt projection can replay them. */
export const GATEWAY_EVENTS_STREAM: StreamSpec = Object.freeze({
  name: STREAM_NAMES.GATEWAY_EVENTS,
  subjects: [STREAM_SUBJECTS.GATEWAY_EVENTS],
  retention: 'limits',
});

export const INVOCATION_EVENTS_STREAM: StreamSpec = Object.freeze({
  name: STREAM_NAMES.INVOCATION_EVENTS,
  subjects: [STREAM_SUBJECTS.INVOCATION_EVENTS],
  retention: 'limits',
});

/** Commands are removed once acknowledged (work queue): each is handled by one consumer. */
export const INVOCATION_COMMANDS_STREAM: StreamSpec = Object.freeze({
  name: STREAM_NAMES.INVOCATION_COMMANDS,
  subjects: [STREAM_SUBJECTS.INVOCATION_COMMANDS],
  retention: 'workqueue',
});

export const SCHEDULER_EVENTS_STREAM: StreamSpec = Object.freeze({
  name: STREAM_NAMES.SCHEDULER_EVENTS,
  subjects: [STREAM_SUBJECTS.SCHEDULER_EVENTS],
  retention: 'limits',
});

export const SCHEDULER_COMMANDS_STREAM: StreamSpec = Object.freeze({
  name: STREAM_NAMES.SCHEDULER_COMMANDS,
  subjects: [STREAM_SUBJECTS.SCHEDULER_COMMANDS],
  retention: 'workqueue',
});

export const CALLBACK_EVENTS_STREAM: StreamSpec = Object.freeze({
  name: STREAM_NAMES.CALLBACK_EVENTS,
  subjects: [STREAM_SUBJECTS.CALLBACK_EVENTS],
  retention: 'limits',
});

export const CALLBACK_COMMANDS_STREAM: StreamSpec = Object.freeze({
  name: STREAM_NAMES.CALLBACK_COMMANDS,
  subjects: [STREAM_SUBJECTS.CALLBACK_COMMANDS],
  retention: 'workqueue',
});

/** Every stream Runline uses; each service passes this to `bus.ensureStreams` at start. */
export const POLLING_EVENTS_STREAM: StreamSpec = Object.freeze({
  name: STREAM_NAMES.POLLING_EVENTS,
  subjects: [STREAM_SUBJECTS.POLLING_EVENTS],
  retention: 'limits',
});

export const WEBHOOK_EVENTS_STREAM: StreamSpec = Object.freeze({
  name: STREAM_NAMES.WEBHOOK_EVENTS,
  subjects: [STREAM_SUBJECTS.WEBHOOK_EVENTS],
  retention: 'limits',
});

export const STREAMS: StreamSpec[] = [
  GATEWAY_EVENTS_STREAM,
  INVOCATION_EVENTS_STREAM,
  INVOCATION_COMMANDS_STREAM,
  SCHEDULER_EVENTS_STREAM,
  SCHEDULER_COMMANDS_STREAM,
  POLLING_EVENTS_STREAM,
  CALLBACK_EVENTS_STREAM,
  CALLBACK_COMMANDS_STREAM,
  WEBHOOK_EVENTS_STREAM,
];
