import { create, toBinary } from '@bufbuild/protobuf';
import { timestampDate, timestampFromDate, timestampNow } from '@bufbuild/protobuf/wkt';
import {
  assertValidEnvelope,
  causedBy,
  decodeEnvelope,
  encodeEnvelope,
  envelopeCodec,
  InvalidEnvelopeError,
  newEnvelope,
  toBusMessage,
  UnexpectedEventTypeError,
  unpackPayload,
  unpackPayloadAs,
} from './envelope.js';
import { EVENT_TYPES, type EventPayload, UnknownEventTypeError } from './event-registry.js';
import { type Envelope, EnvelopeSchema } from './gen/runline/common/v1/envelope_pb.js';
import {
  ApiTokenRevokedSchema,
  ProjectDeletedSchema,
  DefinitionPublishedSchema,
  InboundHookRevokedSchema,
  EnrollmentPolicy,
  OnErrorPolicy,
  OrganizationCreatedSchema,
  OrganizationPlanChangedSchema,
  ProjectApiSettingsChangedSchema,
  ProjectCreatedSchema,
  ProjectType,
} from './gen/runline/gateway/v1/events_pb.js';
import { ApprovalDecision, RunInvocationSchema, RunMode, RunTarget } from './gen/runline/invocation/v1/commands_pb.js';
import { DeliverCallbackSchema } from './gen/runline/callback/v1/commands_pb.js';
import { CallbackAttemptedSchema, CallbackAttemptOutcome } from './gen/runline/callback/v1/events_pb.js';
import { FireRunEndedSchema, JobKind, ScheduleJobSchema } from './gen/runline/scheduler/v1/commands_pb.js';
import { PolledItemRunFailedSchema, PollFailedSchema } from './gen/runline/polling/v1/events_pb.js';
import { HookDeliveryRejectedSchema } from './gen/runline/webhook/v1/events_pb.js';
import {
  ScheduledJobCancelledSchema,
  ScheduledJobFiredSchema,
  ScheduledJobRescheduledSchema,
} from './gen/runline/scheduler/v1/events_pb.js';
import {
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
} from './gen/runline/invocation/v1/events_pb.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

function projectCreated(): Envelope {
  return newEnvelope({
    type: EVENT_TYPES.PROJECT_CREATED,
    payload: create(ProjectCreatedSchema, { orgId: 'org-1', projectId: 'prj-1', name: 'Orders', type: ProjectType.AUTOMATION }),
    orgId: 'org-1',
    projectId: 'prj-1',
  });
}

/** An envelope encoded without the validation `encodeEnvelope` applies. */
function rawEnvelopeBytes(fields: Partial<Pick<Envelope, 'id' | 'type' | 'occurredAt' | 'orgId'>>): Uint8Array {
  return toBinary(EnvelopeSchema, create(EnvelopeSchema, fields));
}

describe('newEnvelope', () => {
  it('fills id, occurredAt and correlationId, and leaves unset ids empty', () => {
    const before = Date.now();
    const envelope = projectCreated();
    const after = Date.now();

    expect(envelope.id).toMatch(UUID);
    expect(envelope.type).toBe('gateway.ProjectCreated.v1');
    expect(envelope.correlationId).toBe(envelope.id);
    expect(envelope.causationId).toBe('');
    expect(envelope.invocationId).toBe('');
    expect(envelope.traceparent).toBe('');
    expect(envelope.orgId).toBe('org-1');
    expect(envelope.projectId).toBe('prj-1');
    const occurredAt = timestampDate(envelope.occurredAt!).getTime();
    expect(occurredAt).toBeGreaterThanOrEqual(before);
    expect(occurredAt).toBeLessThanOrEqual(after);
  });

  it('gives every envelope a new id', () => {
    expect(projectCreated().id).not.toBe(projectCreated().id);
  });

  it('keeps the chain fields and the time it is given', () => {
    const occurredAt = new Date('2026-01-02T03:04:05.678Z');
    const envelope = newEnvelope({
      type: EVENT_TYPES.API_TOKEN_REVOKED,
      payload: create(ApiTokenRevokedSchema, { orgId: 'o', projectId: 'p', tokenId: 't' }),
      orgId: 'o',
      projectId: 'p',
      invocationId: 'inv-1',
      correlationId: 'corr-1',
      causationId: 'cause-1',
      traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
      occurredAt,
    });
    expect(envelope).toMatchObject({
      invocationId: 'inv-1',
      correlationId: 'corr-1',
      causationId: 'cause-1',
      traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
    });
    expect(timestampDate(envelope.occurredAt!)).toEqual(occurredAt);
  });

  it('refuses a payload of another message than the type names', () => {
    const wrong = create(OrganizationCreatedSchema, { orgId: 'o', name: 'n' }) as unknown as EventPayload<'gateway.ProjectCreated.v1'>;
    expect(() => newEnvelope({ type: EVENT_TYPES.PROJECT_CREATED, payload: wrong, orgId: 'o' })).toThrow(TypeError);
  });

  it('refuses an unregistered type', () => {
    const input = {
      type: 'gateway.ProjectArchived.v1',
      payload: create(ProjectCreatedSchema),
      orgId: 'o',
    } as unknown as Parameters<typeof newEnvelope>[0];
    expect(() => newEnvelope(input)).toThrow(UnknownEventTypeError);
  });
});

describe('causedBy', () => {
  it('continues the chain of the causing message', () => {
    const cause = projectCreated();
    const effect = newEnvelope({
      type: EVENT_TYPES.PROJECT_API_SETTINGS_CHANGED,
      payload: create(ProjectApiSettingsChangedSchema, { orgId: 'org-1', projectId: 'prj-1', externalApiEnabled: true }),
      orgId: 'org-1',
      ...causedBy(cause),
    });
    expect(effect.correlationId).toBe(cause.id);
    expect(effect.causationId).toBe(cause.id);
    expect(effect.id).not.toBe(cause.id);

    const next = newEnvelope({
      type: EVENT_TYPES.API_TOKEN_REVOKED,
      payload: create(ApiTokenRevokedSchema, { orgId: 'org-1' }),
      orgId: 'org-1',
      ...causedBy(effect),
    });
    expect(next.correlationId).toBe(cause.id);
    expect(next.causationId).toBe(effect.id);
  });
});

describe('encode / decode / unpack round trip', () => {
  const cases = [
    newEnvelope({
      type: EVENT_TYPES.ORGANIZATION_CREATED,
      payload: create(OrganizationCreatedSchema, { orgId: 'org-1', name: 'Acme — Ünïcode' }),
      orgId: 'org-1',
    }),
    newEnvelope({
      type: EVENT_TYPES.ORGANIZATION_PLAN_CHANGED,
      payload: create(OrganizationPlanChangedSchema, {
        orgId: 'org-1',
        monthlyQuota: 10_000n,
        rateLimitPerMinute: 120,
        rateLimitWindowMs: 60_000n,
        renewalDay: 28,
      }),
      orgId: 'org-1',
    }),
    projectCreated(),
    newEnvelope({
      type: EVENT_TYPES.PROJECT_API_SETTINGS_CHANGED,
      payload: create(ProjectApiSettingsChangedSchema, {
        orgId: 'org-1',
        projectId: 'prj-1',
        externalApiEnabled: true,
        defaultEnrollmentPolicy: EnrollmentPolicy.EVERY_MATCH,
        defaultOnErrorPolicy: OnErrorPolicy.CONTINUE,
        defaultCallbackUrl: 'https://example.com/hook',
        defaultCallbackSecret: 's3cret',
        rateLimitPerMinute: 0,
      }),
      orgId: 'org-1',
      projectId: 'prj-1',
    }),
    newEnvelope({
      type: EVENT_TYPES.DEFINITION_PUBLISHED,
      payload: create(DefinitionPublishedSchema, {
        orgId: 'org-1',
        projectId: 'prj-1',
        version: 3,
        definitionJson: JSON.stringify({ schemaVersion: 1, workflow: { start: 'n1', nodes: {} } }),
      }),
      orgId: 'org-1',
      projectId: 'prj-1',
    }),
    newEnvelope({
      type: EVENT_TYPES.API_TOKEN_REVOKED,
      payload: create(ApiTokenRevokedSchema, { orgId: 'org-1', projectId: 'prj-1', tokenId: 'tok-1', configVersion: 7n }),
      orgId: 'org-1',
      projectId: 'prj-1',
    }),
    newEnvelope({
      type: EVENT_TYPES.PROJECT_DELETED,
      payload: create(ProjectDeletedSchema, { orgId: 'org-1', projectId: 'prj-1', configVersion: 8n }),
      orgId: 'org-1',
      projectId: 'prj-1',
    }),
    newEnvelope({
      type: EVENT_TYPES.INBOUND_HOOK_REVOKED,
      payload: create(InboundHookRevokedSchema, { orgId: 'org-1', projectId: 'prj-1', hookId: 'hook-1', configVersion: 9n }),
      orgId: 'org-1',
      projectId: 'prj-1',
    }),
    ...invocationCases(),
    ...schedulerCases(),
    ...pollingCases(),
    ...callbackCases(),
  ];

  it('covers every registered type', () => {
    expect(cases.map((envelope) => envelope.type).sort()).toEqual(Object.values(EVENT_TYPES).sort());
  });

  it.each(cases.map((envelope) => [envelope.type, envelope] as const))('%s survives the wire unchanged', (_type, envelope) => {
    const decoded = decodeEnvelope(encodeEnvelope(envelope));
    expect(decoded).toEqual(envelope);
    expect(unpackPayload(decoded)).toEqual(unpackPayload(envelope));
  });

  it('keeps proto3 optional fields absent, and present when zero', () => {
    const unlimited = newEnvelope({
      type: EVENT_TYPES.ORGANIZATION_PLAN_CHANGED,
      payload: create(OrganizationPlanChangedSchema, { orgId: 'org-1' }),
      orgId: 'org-1',
    });
    const plan = unpackPayloadAs(decodeEnvelope(encodeEnvelope(unlimited)), EVENT_TYPES.ORGANIZATION_PLAN_CHANGED);
    expect(plan.monthlyQuota).toBeUndefined();
    expect(plan.renewalDay).toBeUndefined();

    const settings = unpackPayloadAs(decodeEnvelope(encodeEnvelope(cases[3]!)), EVENT_TYPES.PROJECT_API_SETTINGS_CHANGED);
    expect(settings.rateLimitPerMinute).toBe(0);
    expect(settings.rateLimitWindowMs).toBeUndefined();
    expect(settings.defaultCallbackSecret).toBe('s3cret');
  });

  it('unpacks to a union narrowed by type', () => {
    const event = unpackPayload(decodeEnvelope(encodeEnvelope(projectCreated())));
    if (event.type !== EVENT_TYPES.PROJECT_CREATED) throw new Error(`unexpected ${event.type}`);
    expect(event.payload.type).toBe(ProjectType.AUTOMATION);
    expect(event.payload.name).toBe('Orders');
  });

  it('round trips through envelopeCodec', () => {
    const envelope = projectCreated();
    expect(envelopeCodec.decode(envelopeCodec.encode(envelope))).toEqual(envelope);
  });
});

describe('unpackPayload', () => {
  it('throws on an unknown type', () => {
    const envelope = create(EnvelopeSchema, { ...projectCreated(), type: 'gateway.ProjectArchived.v1' });
    expect(() => unpackPayload(envelope)).toThrow(UnknownEventTypeError);
    expect(() => unpackPayload(envelope)).toThrow('unknown event type "gateway.ProjectArchived.v1"');
  });

  it('throws InvalidEnvelopeError when the payload does not decode', () => {
    // Field 1, length-delimited, announces 5 bytes but carries 1.
    const envelope = create(EnvelopeSchema, { ...projectCreated(), payload: new Uint8Array([0x0a, 0x05, 0x61]) });
    expect(() => unpackPayload(envelope)).toThrow(InvalidEnvelopeError);
  });

  it('unpackPayloadAs refuses another type', () => {
    expect(() => unpackPayloadAs(projectCreated(), EVENT_TYPES.API_TOKEN_REVOKED)).toThrow(UnexpectedEventTypeError);
  });
});

describe('validation', () => {
  it.each([
    ['id', { type: 'gateway.ProjectCreated.v1', occurredAt: timestampNow() }],
    ['type', { id: 'e-1', occurredAt: timestampNow() }],
    ['occurredAt', { id: 'e-1', type: 'gateway.ProjectCreated.v1' }],
  ] as const)('decodeEnvelope rejects an envelope without %s', (field, fields) => {
    expect(() => decodeEnvelope(rawEnvelopeBytes(fields))).toThrow(InvalidEnvelopeError);
    expect(() => decodeEnvelope(rawEnvelopeBytes(fields))).toThrow(new RegExp(`lacks ${field}$`));
  });

  it('decodeEnvelope rejects empty input and bytes that are not protobuf', () => {
    expect(() => decodeEnvelope(new Uint8Array())).toThrow('lacks id, type, occurredAt');
    expect(() => decodeEnvelope(new TextEncoder().encode('{"id":"x","type":"y"}'))).toThrow(InvalidEnvelopeError);
  });

  it('accepts an envelope of an unknown type (unpacking decides what to do with it)', () => {
    const bytes = rawEnvelopeBytes({ id: 'e-1', type: 'future.Thing.v1', occurredAt: timestampNow() });
    expect(decodeEnvelope(bytes).type).toBe('future.Thing.v1');
  });

  it('encodeEnvelope refuses an invalid envelope, so it never reaches the outbox', () => {
    const envelope = create(EnvelopeSchema, { ...projectCreated(), occurredAt: undefined });
    expect(() => encodeEnvelope(envelope)).toThrow(InvalidEnvelopeError);
    expect(() => assertValidEnvelope(create(EnvelopeSchema))).toThrow('lacks id, type, occurredAt');
  });
});

describe('toBusMessage', () => {
  it('uses the envelope id as the dedupe key and the registered subject', () => {
    const envelope = newEnvelope({
      type: EVENT_TYPES.PROJECT_API_SETTINGS_CHANGED,
      payload: create(ProjectApiSettingsChangedSchema, { orgId: 'org-1', projectId: 'prj-1' }),
      orgId: 'org-1',
      projectId: 'prj-1',
    });
    const message = toBusMessage(envelope);
    expect(message.id).toBe(envelope.id);
    expect(message.subject).toBe('gateway.evt.project-api-settings-changed');
    expect(decodeEnvelope(message.data)).toEqual(envelope);
  });

  it('throws on an unknown type instead of guessing a subject', () => {
    const envelope = create(EnvelopeSchema, { ...projectCreated(), type: 'gateway.ProjectArchived.v1' });
    expect(() => toBusMessage(envelope)).toThrow(UnknownEventTypeError);
  });
});

/** One envelope per invocation event and command, with every field set. */
function invocationCases(): Envelope[] {
  const at = timestampFromDate(new Date('2026-01-01T00:00:05.125Z'));
  const request = create(InvocationRequestInfoSchema, {
    target: RunTarget.AUTOMATION,
    mode: RunMode.ASYNC,
    triggerSource: 'WEBHOOK',
    environment: 'PRODUCTION',
    requestPayloadJson: '{"payload":{"orderId":"o-1"}}',
    enrollmentPolicy: 'EVERY_MATCH',
    onErrorPolicy: 'ABORT',
    startedByTokenId: 'tok-1',
    definitionVersion: 2,
    sessionId: '',
    maxAttempts: 3,
  });
  const scope = { orgId: 'org-1', projectId: 'prj-1', invocationId: 'inv-1' };
  const run = { stepsJson: '[]', traceJson: '{"runtime":"runline-engine/1"}', durationMs: 12n };
  return [
    newEnvelope({ type: EVENT_TYPES.INVOCATION_QUEUED, payload: create(InvocationQueuedSchema, { request }), ...scope }),
    newEnvelope({ type: EVENT_TYPES.INVOCATION_STARTED, payload: create(InvocationStartedSchema, { attempt: 1, request }), ...scope }),
    newEnvelope({ type: EVENT_TYPES.INVOCATION_SUCCEEDED, payload: create(InvocationSucceededSchema, { resultJson: '{"ok":true}', ...run }), ...scope }),
    newEnvelope({
      type: EVENT_TYPES.INVOCATION_FAILED,
      payload: create(InvocationFailedSchema, { errorMessage: 'boom', kind: FailureKind.RUN, attempt: 1, request, ...run }),
      ...scope,
    }),
    newEnvelope({ type: EVENT_TYPES.INVOCATION_TIMED_OUT, payload: create(InvocationTimedOutSchema, { errorMessage: 'late', ...run }), ...scope }),
    newEnvelope({
      type: EVENT_TYPES.INVOCATION_SUSPENDED,
      payload: create(InvocationSuspendedSchema, {
        stepsJson: '[]',
        traceJson: '{}',
        pendingApprovalJson: '{"nodeId":"a"}',
        resumeAt: timestampFromDate(new Date('2026-01-01T00:00:00Z')),
      }),
      ...scope,
    }),
    newEnvelope({
      type: EVENT_TYPES.INVOCATION_RETRY_SCHEDULED,
      payload: create(InvocationRetryScheduledSchema, {
        failedAttempt: 1,
        errorMessage: 'boom',
        retryAt: timestampFromDate(new Date('2026-01-01T00:00:01Z')),
        stepsJson: '[]',
        traceJson: '{}',
      }),
      ...scope,
    }),
    newEnvelope({
      type: EVENT_TYPES.INVOCATION_RETRIES_EXHAUSTED,
      payload: create(InvocationRetriesExhaustedSchema, {
        requestPayloadJson: '{}',
        sealedRequestJson: 'v1.a.b.c',
        failureReason: 'boom',
        attemptCount: 3,
        triggerKey: 'external_event',
        source: 'automation',
        targetType: 'FLOW',
      }),
      ...scope,
    }),
    newEnvelope({ type: EVENT_TYPES.RUN_INVOCATION, payload: create(RunInvocationSchema, { invocationId: 'inv-1' }), ...scope }),
    newEnvelope({
      type: EVENT_TYPES.INVOCATION_SCHEDULED,
      payload: create(InvocationScheduledSchema, { request, scheduledFor: at, schedulerJobName: 'run-inv-1' }),
      ...scope,
    }),
    newEnvelope({ type: EVENT_TYPES.INVOCATION_RESCHEDULED, payload: create(InvocationRescheduledSchema, { scheduledFor: at }), ...scope }),
    newEnvelope({ type: EVENT_TYPES.INVOCATION_CANCELLED, payload: create(InvocationCancelledSchema, {}), ...scope }),
    newEnvelope({ type: EVENT_TYPES.INVOCATION_RESUMED, payload: create(InvocationResumedSchema, { attempt: 1 }), ...scope }),
    newEnvelope({
      type: EVENT_TYPES.INVOCATION_APPROVAL_DECIDED,
      payload: create(InvocationApprovalDecidedSchema, { nodeId: 'gate', decision: ApprovalDecision.APPROVE, decidedBy: 'user-1', decidedAt: at, comment: 'ok' }),
      ...scope,
    }),
  ];
}

function schedulerCases(): Envelope[] {
  const scope = { orgId: 'org-1', projectId: 'prj-1', invocationId: 'inv-1' };
  const job = { name: 'run-inv-1', kind: JobKind.START_RUN, invocationId: 'inv-1' };
  const at = timestampFromDate(new Date('2026-01-01T00:00:01.250Z'));
  return [
    newEnvelope({ type: EVENT_TYPES.SCHEDULE_JOB, payload: create(ScheduleJobSchema, { ...job, dueAt: at, orgId: 'org-1', projectId: 'prj-1' }), ...scope }),
    newEnvelope({ type: EVENT_TYPES.SCHEDULED_JOB_FIRED, payload: create(ScheduledJobFiredSchema, { ...job, dueAt: at, firedAt: at }), ...scope }),
    newEnvelope({ type: EVENT_TYPES.SCHEDULED_JOB_CANCELLED, payload: create(ScheduledJobCancelledSchema, { ...job, cancelledAt: at }), ...scope }),
    newEnvelope({ type: EVENT_TYPES.SCHEDULED_JOB_RESCHEDULED, payload: create(ScheduledJobRescheduledSchema, { ...job, dueAt: at }), ...scope }),
    newEnvelope({
      type: EVENT_TYPES.FIRE_RUN_ENDED,
      payload: create(FireRunEndedSchema, { invocationId: 'inv-1', scheduleId: 'daily', scheduledTime: at, status: 'SUCCEEDED', endedAt: at }),
      ...scope,
    }),
  ];
}

function pollingCases(): Envelope[] {
  const scope = { orgId: 'org-1', projectId: 'prj-1' };
  const trigger = { triggerId: 'trg-1', pollKey: 'orders', source: 'shop' };
  return [
    newEnvelope({
      type: EVENT_TYPES.POLL_FAILED,
      payload: create(PollFailedSchema, { ...trigger, pollEndpoint: 'https://shop.example/orders', failureReason: 'endpoint answered 500', dueAtMs: 1_767_225_601_250n }),
      ...scope,
    }),
    newEnvelope({
      type: EVENT_TYPES.POLLED_ITEM_RUN_FAILED,
      payload: create(PolledItemRunFailedSchema, { ...trigger, sealedPayloadJson: 'v1.a.b.c', failureReason: 'Payload is missing required keys: customerId', invocationId: 'inv-1' }),
      ...scope,
    }),
    newEnvelope({
      type: EVENT_TYPES.HOOK_DELIVERY_REJECTED,
      payload: create(HookDeliveryRejectedSchema, {
        hookId: 'hook-1',
        hookName: 'shop orders',
        sealedBodyJson: 'v1.a.b.c',
        runTarget: 'FLOW',
        failureReason: 'Payload is missing required keys: customerId',
        invocationId: 'inv-1',
      }),
      ...scope,
      invocationId: 'inv-1',
    }),
  ];
}

function callbackCases(): Envelope[] {
  const scope = { orgId: 'org-1', projectId: 'prj-1', invocationId: 'inv-1' };
  const body = new TextEncoder().encode('{"invocationId":"inv-1","status":"SUCCEEDED","result":{},"trace":null}');
  return [
    newEnvelope({
      type: EVENT_TYPES.DELIVER_CALLBACK,
      payload: create(DeliverCallbackSchema, { invocationId: 'inv-1', url: 'https://hooks.example/cb', sealedSecret: 'v1.a.b.c', body, runStatus: 'SUCCEEDED' }),
      ...scope,
    }),
    newEnvelope({
      type: EVENT_TYPES.CALLBACK_ATTEMPTED,
      payload: create(CallbackAttemptedSchema, {
        deliveryId: 'd-1',
        invocationId: 'inv-1',
        attempt: 2,
        attemptedAt: timestampFromDate(new Date('2026-01-01T00:00:01.250Z')),
        durationMs: 12,
        outcome: CallbackAttemptOutcome.HTTP_ERROR,
        statusCode: 500,
        error: 'receiver answered 500',
        final: false,
      }),
      ...scope,
    }),
  ];
}
