import { create, StartInvocationReplySchema, timestampFromDate, type StartInvocationReply } from '@runline/contracts';
import { resultOf, type RunModeName, type TargetName } from './start-run.handler.js';
import { answerRun, type AnswerSink } from './runs.controller.js';

interface Answer {
  status?: number;
  body: Record<string, unknown>;
  headers?: Record<string, string>;
}

/** The answer a StartInvocation reply gets: the handler's outcome, as the controller answers it. */
function answerOf(reply: StartInvocationReply, target: TargetName, mode: RunModeName): Answer {
  const answer: Answer = { body: {} };
  const sink = {
    status: (code: number) => ((answer.status = code), sink),
    headers: (headers: Record<string, string>) => ((answer.headers = headers), sink),
  };
  answer.body = answerRun(sink as unknown as AnswerSink, resultOf(reply, target, mode));
  return answer;
}

describe('answerOf: the 202 of an async run', () => {
  it('gives scheduledFor of a scheduled run to the millisecond', () => {
    const at = new Date('2030-01-01T10:00:05.123Z');
    const reply = create(StartInvocationReplySchema, { invocationId: 'i-1', status: 'SCHEDULED', scheduledFor: timestampFromDate(at) });
    expect(answerOf(reply, 'FLOW', 'ASYNC')).toEqual({
      status: 202,
      body: { invocationId: 'i-1', status: 'SCHEDULED', scheduledFor: '2030-01-01T10:00:05.123Z' },
    });
    expect(answerOf(reply, 'AUTOMATION', 'ASYNC').body.scheduledFor).toBe('2030-01-01T10:00:05.123Z');
  });

  it('gives scheduledFor null for an immediate run, and none for bots/invoke', () => {
    const reply = create(StartInvocationReplySchema, { invocationId: 'i-2', status: 'QUEUED' });
    expect(answerOf(reply, 'FLOW', 'ASYNC')).toEqual({ status: 202, body: { invocationId: 'i-2', status: 'QUEUED', scheduledFor: null } });
    expect(answerOf(reply, 'BOT', 'ASYNC')).toEqual({ status: 202, body: { invocationId: 'i-2', status: 'QUEUED' } });
  });
});

describe('answerOf: a repeated idempotency key', () => {
  it('of a run still scheduled: 202 with scheduledFor', () => {
    const reply = create(StartInvocationReplySchema, {
      invocationId: 'i-3',
      status: 'SCHEDULED',
      idempotentReplay: true,
      scheduledFor: timestampFromDate(new Date('2030-01-01T10:00:05.123Z')),
    });
    expect(answerOf(reply, 'FLOW', 'ASYNC')).toEqual({
      status: 202,
      body: { invocationId: 'i-3', status: 'SCHEDULED', scheduledFor: '2030-01-01T10:00:05.123Z', idempotentReplay: true },
    });
  });

  it('of an immediate run in progress: 202 without scheduledFor, as before', () => {
    const reply = create(StartInvocationReplySchema, { invocationId: 'i-4', status: 'QUEUED', idempotentReplay: true });
    expect(answerOf(reply, 'FLOW', 'ASYNC')).toEqual({ status: 202, body: { invocationId: 'i-4', status: 'QUEUED', idempotentReplay: true } });
  });
});

describe('answerOf: the monthly quota', () => {
  it('used up: 429 with quota {limit, used} and the X-Quota headers', () => {
    const periodStart = new Date('2026-11-15T00:00:00.000Z');
    const reply = create(StartInvocationReplySchema, { quotaExceeded: { limit: 100n, used: 100n, periodStart: timestampFromDate(periodStart) } });
    expect(answerOf(reply, 'FLOW', 'SYNC')).toEqual({
      status: 429,
      body: { error: 'Monthly API call quota exceeded', quota: { limit: 100, used: 100 } },
      headers: {
        'x-quota-limit': '100',
        'x-quota-used': '100',
        'x-quota-remaining': '0',
        'x-quota-period-start': '2026-11-15T00:00:00.000Z',
      },
    });
  });

  it('not checkable: 503 without quota headers', () => {
    const reply = create(StartInvocationReplySchema, { quotaUnavailable: true });
    expect(answerOf(reply, 'AUTOMATION', 'ASYNC')).toEqual({ status: 503, body: { error: 'Unable to validate monthly API quota' } });
  });
});
