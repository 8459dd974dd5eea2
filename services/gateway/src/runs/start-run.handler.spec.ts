import {
  create,
  fromBinary,
  INVOCATION_REQUEST_SUBJECTS,
  QUOTA_EXCEEDED_MESSAGE,
  QUOTA_UNAVAILABLE_MESSAGE,
  RunMode,
  RunTarget,
  StartInvocationReplySchema,
  StartInvocationRequestSchema,
  timestampDate,
  timestampFromDate,
  toBinary,
} from '@runline/contracts';
import { FakeServiceClient, recordingLogger } from '../../test/fake-service-client.js';
import type { GatewayConfig } from '../config.js';
import { API_ERRORS } from '../platform/errors/error-messages.js';
import { RUN_MESSAGES } from './run-messages.js';
import type { ProjectRepository } from '../platform/store/project.repository.js';
import { MAX_IDEMPOTENCY_KEY_LENGTH, StartRunHandler, type StartRunCommand } from './start-run.handler.js';

const START = INVOCATION_REQUEST_SUBJECTS.START_INVOCATION;
const receivedAt = new Date('2030-01-01T10:00:00.000Z');
const caller = { tokenId: 't-1', orgId: 'o-1', projectId: 'p-1', publishedVersion: 3, configVersion: 7 };
const reply = (fields: Record<string, unknown>) => toBinary(StartInvocationReplySchema, create(StartInvocationReplySchema, fields as never));

/** The handler with the invocation service faked; the project's draft is the only read of ours. */
function handlerWith(services: FakeServiceClient, draft: Record<string, unknown> | null = null) {
  const { lines, logger } = recordingLogger();
  const projects = { draftOf: async () => draft } as unknown as ProjectRepository;
  const config = { SYNC_REQUEST_TIMEOUT_MS: 40_000 } as GatewayConfig;
  return { handler: new StartRunHandler(services.asClient(), projects, config, logger), lines };
}

function command(fields: Partial<StartRunCommand> = {}): StartRunCommand {
  return { caller, target: 'FLOW', mode: 'ASYNC', body: { input: 1 }, receivedAt, ...fields };
}

function sentRequest(services: FakeServiceClient) {
  const [call] = services.callsTo(START);
  return { ...call!, message: fromBinary(StartInvocationRequestSchema, call!.request) };
}

describe('StartRunHandler: what it sends the invocation service', () => {
  it('hands on the caller, the target, the mode, the body and the versions', async () => {
    const services = new FakeServiceClient().answer(START, reply({ invocationId: 'i-1', status: 'QUEUED' }));
    await handlerWith(services).handler.execute(command({ idempotencyKey: 'k-1' }));
    const { message, timeoutMs } = sentRequest(services);
    expect(message).toMatchObject({ orgId: 'o-1', projectId: 'p-1', tokenId: 't-1', target: RunTarget.FLOW, mode: RunMode.ASYNC, idempotencyKey: 'k-1', publishedVersion: 3, configVersion: 7n });
    expect(JSON.parse(message.bodyJson)).toEqual({ input: 1 });
    expect(timestampDate(message.receivedAt!)).toEqual(receivedAt);
    expect(message.runAt).toBeUndefined();
    // An async run waits the default deadline; a sync one as long as the run may take.
    expect(timeoutMs).toBeUndefined();
  });

  it('waits SYNC_REQUEST_TIMEOUT_MS for a sync run', async () => {
    const services = new FakeServiceClient().answer(START, reply({ invocationId: 'i-1', status: 'SUCCEEDED' }));
    await handlerWith(services).handler.execute(command({ mode: 'SYNC' }));
    expect(sentRequest(services).timeoutMs).toBe(40_000);
  });

  it('drops an idempotency key longer than the limit, and an empty one', async () => {
    const services = new FakeServiceClient().answer(START, reply({ invocationId: 'i-1', status: 'QUEUED' }));
    const { handler } = handlerWith(services);
    await handler.execute(command({ idempotencyKey: 'k'.repeat(MAX_IDEMPOTENCY_KEY_LENGTH + 1) }));
    await handler.execute(command({ idempotencyKey: '' }));
    await handler.execute(command({ idempotencyKey: 'k'.repeat(MAX_IDEMPOTENCY_KEY_LENGTH) }));
    expect(services.callsTo(START).map((call) => fromBinary(StartInvocationRequestSchema, call.request).idempotencyKey.length)).toEqual([0, 0, MAX_IDEMPOTENCY_KEY_LENGTH]);
  });

  it('sends the start time of a scheduled async trigger (delaySeconds from when it was received)', async () => {
    const services = new FakeServiceClient().answer(START, reply({ invocationId: 'i-1', status: 'SCHEDULED' }));
    await handlerWith(services).handler.execute(command({ body: { delaySeconds: 60 } }));
    expect(timestampDate(sentRequest(services).message.runAt!)).toEqual(new Date('2030-01-01T10:01:00.000Z'));
  });

  it('ignores the scheduling fields of a sync trigger and of bots/invoke, and of a dry run', async () => {
    const services = new FakeServiceClient().answer(START, reply({ invocationId: 'i-1', status: 'QUEUED' }));
    const { handler } = handlerWith(services);
    await handler.execute(command({ mode: 'SYNC', body: { delaySeconds: 60 } }));
    await handler.execute(command({ target: 'BOT', body: { delaySeconds: 60 } }));
    await handler.execute(command({ body: { delaySeconds: 60, dryRun: true } }));
    expect(services.callsTo(START).map((call) => fromBinary(StartInvocationRequestSchema, call.request).runAt)).toEqual([undefined, undefined, undefined]);
  });

  it('sends the draft only for a sync automation test run (runtimeStage "app")', async () => {
    const draft = { nodes: [{ id: 'a' }] };
    const services = new FakeServiceClient().answer(START, reply({ invocationId: 'i-1', status: 'SUCCEEDED' }));
    const { handler } = handlerWith(services, draft);
    await handler.execute(command({ target: 'AUTOMATION', mode: 'SYNC', body: { runtimeStage: 'app' } }));
    await handler.execute(command({ target: 'AUTOMATION', mode: 'ASYNC', body: { runtimeStage: 'app' } }));
    await handler.execute(command({ target: 'AUTOMATION', mode: 'SYNC', body: {} }));
    expect(services.callsTo(START).map((call) => fromBinary(StartInvocationRequestSchema, call.request).draftDefinitionJson)).toEqual([JSON.stringify(draft), '', '']);
  });
});

describe('StartRunHandler: refusals', () => {
  it('refuses bad scheduling fields without asking the invocation service', async () => {
    const services = new FakeServiceClient();
    const { handler } = handlerWith(services);
    expect(await handler.execute(command({ body: { runAt: '2030-01-01T11:00:00Z', delaySeconds: 5 } }))).toEqual({
      outcome: 'refused',
      refusal: { kind: 'invalid', message: RUN_MESSAGES.schedulingBothFields },
    });
    expect(await handler.execute(command({ body: { runAt: '2029-12-31T10:00:00Z' } }))).toEqual({
      outcome: 'refused',
      refusal: { kind: 'invalid', message: RUN_MESSAGES.runAtNotInFuture },
    });
    expect(services.calls).toEqual([]);
  });

  it('a silent invocation service: 503 for an async run, the sync failure for a sync one', async () => {
    const services = new FakeServiceClient().answer(START, 'silent');
    const { handler, lines } = handlerWith(services);
    expect(await handler.execute(command())).toEqual({ outcome: 'refused', refusal: { kind: 'unavailable', message: API_ERRORS.invocationServiceUnavailable } });
    expect(await handler.execute(command({ mode: 'SYNC' }))).toEqual({ outcome: 'refused', refusal: { kind: 'failed', message: RUN_MESSAGES.syncTriggerFailed } });
    expect(lines.map((line) => line.message)).toEqual(['StartInvocation failed (ASYNC)', 'StartInvocation failed (SYNC)']);
  });

  it('an async run the bus could not start for another reason is "not started"', async () => {
    const services = new FakeServiceClient().answer(START, new Error('broken'));
    expect(await handlerWith(services).handler.execute(command())).toEqual({ outcome: 'refused', refusal: { kind: 'failed', message: RUN_MESSAGES.runNotStarted } });
  });

  it('passes on the quota: used up (with the figures) or not checkable', async () => {
    const periodStart = new Date('2030-01-01T00:00:00.000Z');
    const services = new FakeServiceClient().answer(
      START,
      reply({ quotaExceeded: { limit: 100n, used: 100n, periodStart: timestampFromDate(periodStart) } }),
      reply({ quotaUnavailable: true }),
    );
    const { handler } = handlerWith(services);
    expect(await handler.execute(command())).toEqual({
      outcome: 'refused',
      refusal: { kind: 'quota-exceeded', message: QUOTA_EXCEEDED_MESSAGE, quota: { limit: 100, used: 100, periodStart: periodStart.toISOString() } },
    });
    expect(await handler.execute(command())).toEqual({ outcome: 'refused', refusal: { kind: 'unavailable', message: QUOTA_UNAVAILABLE_MESSAGE } });
  });
});

describe('StartRunHandler: outcomes', () => {
  it('a sync run that succeeded is finished, with its result', async () => {
    const services = new FakeServiceClient().answer(START, reply({ invocationId: 'i-1', status: 'SUCCEEDED', resultJson: '{"ok":true}' }));
    expect(await handlerWith(services).handler.execute(command({ mode: 'SYNC' }))).toEqual({
      outcome: 'finished',
      run: { invocationId: 'i-1', status: 'SUCCEEDED', result: { ok: true } },
    });
  });

  it('a run that failed is failed, with its error', async () => {
    const services = new FakeServiceClient().answer(START, reply({ invocationId: 'i-1', status: 'FAILED', errorMessage: 'boom' }));
    expect(await handlerWith(services).handler.execute(command({ mode: 'SYNC' }))).toEqual({
      outcome: 'failed',
      run: { error: 'boom', invocationId: 'i-1', status: 'FAILED' },
    });
  });

  it('an async run is accepted', async () => {
    const services = new FakeServiceClient().answer(START, reply({ invocationId: 'i-1', status: 'QUEUED' }));
    expect(await handlerWith(services).handler.execute(command())).toEqual({ outcome: 'accepted', run: { invocationId: 'i-1', status: 'QUEUED', scheduledFor: null } });
  });
});
