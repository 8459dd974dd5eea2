import { randomUUID } from 'node:crypto';
import {
  create,
  fromBinary,
  INVOCATION_REQUEST_SUBJECTS,
  QUOTA_EXCEEDED_MESSAGE,
  RecordRejectedDeliveryReplySchema,
  RecordRejectedDeliveryRequestSchema,
  RunMode,
  RunTarget,
  StartInvocationReplySchema,
  StartInvocationRequestSchema,
  timestampFromDate,
  toBinary,
  WEBHOOK_REQUEST_SUBJECTS,
} from '@runline/contracts';
import { FakeServiceClient, recordingLogger } from '../../test/fake-service-client.js';
import type { AccessDirectory, ProjectRecord } from '../platform/access/access-directory.js';
import { API_ERRORS } from '../platform/errors/error-messages.js';
import { RUN_MESSAGES } from '../runs/index.js';
import { BODY_ERRORS } from '../platform/json/json-object.js';
import type { RateLimitConfig } from '../platform/rate-limits/rate-limit.config.js';
import type { RateLimitCounters } from '../platform/rate-limits/rate-limit-counters.js';
import type { Tally } from '../platform/rate-limits/rate-limit-policy.js';
import type { DeliveryCheck, DeliveryVerifier } from './delivery-verifier.js';
import { ReceiveHookDeliveryHandler, type ReceiveHookDeliveryCommand } from './receive-hook-delivery.handler.js';

// The other services are faked (the invocation service's StartInvocation, the webhook service's
// RecordRejectedDelivery). The hook's verification, the project read and the rate-limit counter
// are this gateway's own lookups, tested on real PostgreSQL elsewhere (hook-directory and
// rate-limit-counters int-specs, e2e/inbound-hooks): here each is given the answer the case needs.
const START = INVOCATION_REQUEST_SUBJECTS.START_INVOCATION;
const RECORD = WEBHOOK_REQUEST_SUBJECTS.RECORD_REJECTED_DELIVERY;
const hookId = randomUUID();
const receivedAt = new Date('2030-01-02T10:00:00.000Z');
const flowProject: ProjectRecord = { id: 'p-1', orgId: 'o-1', type: 'CHATBOT', deleted: false, externalApiEnabled: true, publishedVersion: 2, configVersion: 5 } as ProjectRecord;
const verified: DeliveryCheck = { verdict: 'verified', projectId: 'p-1', rateLimitPerMinute: 2, deliveryKey: 'd-1' };

const started = (fields: Record<string, unknown>) => toBinary(StartInvocationReplySchema, create(StartInvocationReplySchema, fields as never));

interface Setup {
  check?: DeliveryCheck;
  project?: ProjectRecord | null;
  rateLimits?: 'on' | 'off';
  tally?: Tally | null;
}

function handlerWith(services: FakeServiceClient, setup: Setup = {}) {
  const { lines, logger } = recordingLogger();
  const verifier = { verify: async () => setup.check ?? verified } as unknown as DeliveryVerifier;
  const directory = { project: async () => (setup.project === undefined ? flowProject : setup.project) } as unknown as AccessDirectory;
  const counters = { count: () => setup.tally ?? null } as unknown as RateLimitCounters;
  const config = { RATE_LIMITS: setup.rateLimits ?? 'off' } as RateLimitConfig;
  return { handler: new ReceiveHookDeliveryHandler(services.asClient(), verifier, directory, counters, config, logger), lines };
}

function delivery(body: unknown, fields: Partial<ReceiveHookDeliveryCommand> = {}): ReceiveHookDeliveryCommand {
  return { hookId, rawBody: Buffer.from(typeof body === 'string' ? body : JSON.stringify(body)), headers: {}, receivedAt, ...fields };
}

const startRequests = (services: FakeServiceClient) => services.callsTo(START).map((call) => fromBinary(StartInvocationRequestSchema, call.request));

describe('ReceiveHookDeliveryHandler: before a run', () => {
  it('an id that is no UUID is not found, and nothing is asked', async () => {
    const services = new FakeServiceClient();
    expect(await handlerWith(services).handler.execute(delivery({}, { hookId: 'nope' }))).toEqual({ outcome: 'not-found' });
    expect(services.calls).toEqual([]);
  });

  it.each(['not-found', 'revoked', 'invalid-signature', 'stale-timestamp', 'ignored'] as const)('a delivery the verifier finds %s gets that outcome', async (verdict) => {
    const services = new FakeServiceClient();
    expect(await handlerWith(services, { check: { verdict } as DeliveryCheck }).handler.execute(delivery({}))).toEqual({ outcome: verdict });
    expect(services.calls).toEqual([]);
  });

  it.each([
    ['', BODY_ERRORS.notJson],
    ['{oops', BODY_ERRORS.notJson],
    ['[1]', BODY_ERRORS.notObject],
    ['{"a":"\\u0000"}', BODY_ERRORS.nul],
  ])('a body %j is a bad body: %s', async (body, message) => {
    const services = new FakeServiceClient();
    expect(await handlerWith(services).handler.execute(delivery(body))).toEqual({ outcome: 'bad-body', message });
    expect(services.calls).toEqual([]);
  });

  it('a deleted (or unknown) project is not found; a switched-off one is disabled', async () => {
    const services = new FakeServiceClient();
    expect(await handlerWith(services, { project: null }).handler.execute(delivery({}))).toEqual({ outcome: 'not-found' });
    expect(await handlerWith(services, { project: { ...flowProject, deleted: true } }).handler.execute(delivery({}))).toEqual({ outcome: 'not-found' });
    expect(await handlerWith(services, { project: { ...flowProject, externalApiEnabled: false } }).handler.execute(delivery({}))).toEqual({ outcome: 'disabled' });
    expect(services.calls).toEqual([]);
  });

  it('over the hook’s rate limit: rate-limited, with its policy and tally, and no run', async () => {
    const services = new FakeServiceClient();
    const tally = { count: 3, resetAtMs: 1, nowMs: 0 };
    expect(await handlerWith(services, { rateLimits: 'on', tally }).handler.execute(delivery({}))).toEqual({ outcome: 'rate-limited', policy: { limit: 2, windowMs: 60_000 }, tally });
    expect(services.calls).toEqual([]);
  });
});

describe('ReceiveHookDeliveryHandler: the run', () => {
  it('starts an immediate async WEBHOOK run of the flow, keyed by the delivery, without the fields that would steer it', async () => {
    const services = new FakeServiceClient().answer(START, started({ invocationId: 'i-1', status: 'QUEUED' }));
    const tally = { count: 1, resetAtMs: 1, nowMs: 0 };
    const result = await handlerWith(services, { rateLimits: 'on', tally }).handler.execute(delivery({ order: 7, dryRun: true, runAt: 'x', delaySeconds: 5 }));
    expect(result).toEqual({ outcome: 'accepted', invocationId: 'i-1', status: 'QUEUED', rateLimit: { policy: { limit: 2, windowMs: 60_000 }, tally } });
    const [sent] = startRequests(services);
    expect(sent).toMatchObject({ orgId: 'o-1', projectId: 'p-1', tokenId: '', target: RunTarget.FLOW, mode: RunMode.ASYNC, idempotencyKey: 'hook:d-1', publishedVersion: 2, configVersion: 5n, triggerSource: 'WEBHOOK' });
    expect(JSON.parse(sent!.bodyJson)).toEqual({ order: 7 });
  });

  it('an automation gets the body as its payload, whole', async () => {
    const services = new FakeServiceClient().answer(START, started({ invocationId: 'i-1', status: 'QUEUED' }));
    await handlerWith(services, { project: { ...flowProject, type: 'AUTOMATION' } }).handler.execute(delivery({ dryRun: true }));
    const [sent] = startRequests(services);
    expect(sent!.target).toBe(RunTarget.AUTOMATION);
    expect(JSON.parse(sent!.bodyJson)).toEqual({ payload: { dryRun: true } });
  });

  it('a delivery without an id runs without a key', async () => {
    const services = new FakeServiceClient().answer(START, started({ invocationId: 'i-1', status: 'QUEUED' }));
    await handlerWith(services, { check: { ...verified, deliveryKey: '' } as DeliveryCheck }).handler.execute(delivery({}));
    expect(startRequests(services).map((sent) => sent.idempotencyKey)).toEqual(['']);
  });

  it('a delivery id seen within 24 hours is repeated, with the first run', async () => {
    const services = new FakeServiceClient().answer(START, started({ invocationId: 'i-0', status: 'QUEUED', idempotentReplay: true, keyTakenAt: timestampFromDate(new Date('2030-01-02T09:00:00Z')) }));
    expect(await handlerWith(services).handler.execute(delivery({}))).toEqual({ outcome: 'repeated', invocationId: 'i-0' });
    expect(startRequests(services).map((sent) => sent.idempotencyKey)).toEqual(['hook:d-1']);
  });

  it('a delivery id whose key was taken over 24 hours ago runs again, under the next key', async () => {
    const services = new FakeServiceClient().answer(
      START,
      started({ invocationId: 'i-0', status: 'SUCCEEDED', idempotentReplay: true, keyTakenAt: timestampFromDate(new Date('2029-12-31T09:00:00Z')) }),
      started({ invocationId: 'i-1', status: 'QUEUED' }),
    );
    expect(await handlerWith(services).handler.execute(delivery({}))).toMatchObject({ outcome: 'accepted', invocationId: 'i-1' });
    expect(startRequests(services).map((sent) => sent.idempotencyKey)).toEqual(['hook:d-1', 'hook:d-1.1']);
  });

  it('a run the trigger checks refused is rejected, and its body is kept by the webhook service as a dead letter', async () => {
    const services = new FakeServiceClient()
      .answer(START, started({ invocationId: 'i-1', status: 'FAILED', errorMessage: 'order is required; total is required' }))
      .answer(RECORD, toBinary(RecordRejectedDeliveryReplySchema, create(RecordRejectedDeliveryReplySchema, { recorded: true })));
    expect(await handlerWith(services).handler.execute(delivery({ a: 1 }))).toEqual({ outcome: 'rejected', invocationId: 'i-1', reasons: ['order is required', 'total is required'] });
    const kept = fromBinary(RecordRejectedDeliveryRequestSchema, services.callsTo(RECORD)[0]!.request);
    expect(kept).toMatchObject({ hookId, invocationId: 'i-1', runTarget: 'FLOW', failureReason: 'order is required; total is required' });
    expect(JSON.parse(kept.bodyJson)).toEqual({ a: 1 });
  });

  it('a rejected delivery whose hook is gone meanwhile is still rejected, with a warning', async () => {
    const services = new FakeServiceClient()
      .answer(START, started({ invocationId: 'i-1', status: 'FAILED' }))
      .answer(RECORD, toBinary(RecordRejectedDeliveryReplySchema, create(RecordRejectedDeliveryReplySchema, { recorded: false })));
    const { handler, lines } = handlerWith(services);
    expect(await handler.execute(delivery({}))).toEqual({ outcome: 'rejected', invocationId: 'i-1', reasons: ['Trigger check failed'] });
    expect(lines).toEqual([{ level: 'warn', message: 'rejected delivery not kept: the hook is gone' }]);
  });

  it('the quota used up: refused with the quota', async () => {
    const services = new FakeServiceClient().answer(START, started({ quotaExceeded: { limit: 1n, used: 1n } }));
    expect(await handlerWith(services).handler.execute(delivery({}))).toMatchObject({ outcome: 'refused', refusal: { kind: 'quota-exceeded', message: QUOTA_EXCEEDED_MESSAGE } });
  });

  it('a silent invocation service: unavailable; a broken call: not started', async () => {
    const silent = new FakeServiceClient().answer(START, 'silent');
    expect(await handlerWith(silent).handler.execute(delivery({}))).toEqual({ outcome: 'refused', refusal: { kind: 'unavailable', message: API_ERRORS.invocationServiceUnavailable } });
    const broken = new FakeServiceClient().answer(START, new Error('broken'));
    expect(await handlerWith(broken).handler.execute(delivery({}))).toEqual({ outcome: 'refused', refusal: { kind: 'failed', message: RUN_MESSAGES.runNotStarted } });
  });
});
