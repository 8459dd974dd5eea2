import {
  ApiTokenRevokedSchema,
  ProjectDeletedSchema,
  DefinitionPublishedSchema,
  InboundHookRevokedSchema,
  OrganizationCreatedSchema,
  OrganizationPlanChangedSchema,
  ProjectApiSettingsChangedSchema,
  ProjectCreatedSchema,
} from './gen/runline/gateway/v1/events_pb.js';
import { RunInvocationSchema } from './gen/runline/invocation/v1/commands_pb.js';
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
import {
  EVENT_REGISTRY,
  EVENT_TYPES,
  eventRegistration,
  isEventType,
  UnknownEventTypeError,
} from './event-registry.js';

describe('event registry', () => {
  it('maps each explicit wire type to its schema and subject', () => {
    // Spelled out on purpose: these are persistent names, a change must fail this test.
    const expected = [
      ['gateway.OrganizationCreated.v1', OrganizationCreatedSchema, 'gateway.evt.organization-created'],
      ['gateway.OrganizationPlanChanged.v1', OrganizationPlanChangedSchema, 'gateway.evt.organization-plan-changed'],
      ['gateway.ProjectCreated.v1', ProjectCreatedSchema, 'gateway.evt.project-created'],
      ['gateway.ProjectApiSettingsChanged.v1', ProjectApiSettingsChangedSchema, 'gateway.evt.project-api-settings-changed'],
      ['gateway.DefinitionPublished.v1', DefinitionPublishedSchema, 'gateway.evt.definition-published'],
      ['gateway.ApiTokenRevoked.v1', ApiTokenRevokedSchema, 'gateway.evt.api-token-revoked'],
      ['gateway.ProjectDeleted.v1', ProjectDeletedSchema, 'gateway.evt.project-deleted'],
      ['gateway.InboundHookRevoked.v1', InboundHookRevokedSchema, 'gateway.evt.inbound-hook-revoked'],
      ['invocation.InvocationQueued.v1', InvocationQueuedSchema, 'invocation.evt.invocation-queued'],
      ['invocation.InvocationStarted.v1', InvocationStartedSchema, 'invocation.evt.invocation-started'],
      ['invocation.InvocationSucceeded.v1', InvocationSucceededSchema, 'invocation.evt.invocation-succeeded'],
      ['invocation.InvocationFailed.v1', InvocationFailedSchema, 'invocation.evt.invocation-failed'],
      ['invocation.InvocationTimedOut.v1', InvocationTimedOutSchema, 'invocation.evt.invocation-timed-out'],
      ['invocation.InvocationSuspended.v1', InvocationSuspendedSchema, 'invocation.evt.invocation-suspended'],
      ['invocation.InvocationRetryScheduled.v1', InvocationRetryScheduledSchema, 'invocation.evt.invocation-retry-scheduled'],
      ['invocation.InvocationRetriesExhausted.v1', InvocationRetriesExhaustedSchema, 'invocation.evt.invocation-retries-exhausted'],
      ['invocation.InvocationScheduled.v1', InvocationScheduledSchema, 'invocation.evt.invocation-scheduled'],
      ['invocation.InvocationRescheduled.v1', InvocationRescheduledSchema, 'invocation.evt.invocation-rescheduled'],
      ['invocation.InvocationCancelled.v1', InvocationCancelledSchema, 'invocation.evt.invocation-cancelled'],
      ['invocation.InvocationResumed.v1', InvocationResumedSchema, 'invocation.evt.invocation-resumed'],
      ['invocation.InvocationApprovalDecided.v1', InvocationApprovalDecidedSchema, 'invocation.evt.invocation-approval-decided'],
      ['invocation.RunInvocation.v1', RunInvocationSchema, 'invocation.cmd.run-invocation'],
      ['scheduler.ScheduledJobFired.v1', ScheduledJobFiredSchema, 'scheduler.evt.scheduled-job-fired'],
      ['scheduler.ScheduledJobCancelled.v1', ScheduledJobCancelledSchema, 'scheduler.evt.scheduled-job-cancelled'],
      ['scheduler.ScheduledJobRescheduled.v1', ScheduledJobRescheduledSchema, 'scheduler.evt.scheduled-job-rescheduled'],
      ['scheduler.ScheduleJob.v1', ScheduleJobSchema, 'scheduler.cmd.schedule-job'],
      ['scheduler.FireRunEnded.v1', FireRunEndedSchema, 'scheduler.cmd.fire-run-ended'],
      ['polling.PollFailed.v1', PollFailedSchema, 'polling.evt.poll-failed'],
      ['polling.PolledItemRunFailed.v1', PolledItemRunFailedSchema, 'polling.evt.polled-item-run-failed'],
      ['webhook.HookDeliveryRejected.v1', HookDeliveryRejectedSchema, 'webhook.evt.hook-delivery-rejected'],
      ['callback.DeliverCallback.v1', DeliverCallbackSchema, 'callback.cmd.deliver-callback'],
      ['callback.CallbackAttempted.v1', CallbackAttemptedSchema, 'callback.evt.callback-attempted'],
    ] as const;
    expect(Object.keys(EVENT_REGISTRY).sort()).toEqual(expected.map(([type]) => type).sort());
    for (const [type, schema, subject] of expected) {
      const registration = eventRegistration(type);
      expect(registration.schema).toBe(schema);
      expect(registration.subject).toBe(subject);
    }
  });

  it('lists every registered type in EVENT_TYPES and nothing else', () => {
    expect(Object.values(EVENT_TYPES).sort()).toEqual(Object.keys(EVENT_REGISTRY).sort());
  });

  it('uses versioned wire names whose domain matches the proto package', () => {
    for (const [type, registration] of Object.entries(EVENT_REGISTRY)) {
      const match = /^([a-z]+)\.([A-Z][A-Za-z]*)\.v(\d+)$/.exec(type);
      if (match === null) throw new Error(`wire type "${type}" is not <domain>.<Message>.v<N>`);
      const [, domain, , version] = match;
      expect(registration.schema.typeName.startsWith(`runline.${domain}.v${version}.`)).toBe(true);
      // Events are past tense on `<domain>.evt.`; work-queue commands travel on `<domain>.cmd.`.
      expect(registration.subject.startsWith(`${domain}.evt.`) || registration.subject.startsWith(`${domain}.cmd.`)).toBe(true);
    }
  });

  it('rejects unknown types', () => {
    expect(isEventType('gateway.ProjectCreated.v1')).toBe(true);
    expect(isEventType('gateway.ProjectCreated.v2')).toBe(false);
    expect(isEventType('toString')).toBe(false);
    expect(() => eventRegistration('gateway.ProjectArchived.v1')).toThrow(UnknownEventTypeError);
    expect(() => eventRegistration('')).toThrow('unknown event type ""');
  });
});
