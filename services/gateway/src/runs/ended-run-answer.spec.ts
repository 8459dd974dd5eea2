import { create, StartInvocationReplySchema } from '@runline/contracts';
import { endedInlineRun, endedRunAnswer } from './ended-run-answer.js';
import type { EndedRun } from './start-run.handler.js';

/** An inline run's end as the invocation service's reply carries it. */
const endedRun = (fields: Partial<Pick<EndedRun, 'status' | 'resultJson' | 'errorMessage'>>): EndedRun =>
  create(StartInvocationReplySchema, { invocationId: 'run-1', status: 'QUEUED', endedRun: fields }).endedRun!;

const ACCEPTED = { invocationId: 'run-1', status: 'QUEUED', scheduledFor: null };

describe('endedRunAnswer: the Prefer: wait answer of an ended run', () => {
  it('gives the result with its keys as GET gives them (the jsonb read model), whatever order it came in', () => {
    const heard = { invocationId: 'run-1', status: 'SUCCEEDED', result: { messages: ['Order 42'], actions: [] }, errorMessage: null };
    expect(JSON.stringify(endedRunAnswer(heard, ACCEPTED))).toBe('{"invocationId":"run-1","status":"SUCCEEDED","result":{"actions":[],"messages":["Order 42"]}}');
  });

  it('an inline run’s end from its StartInvocation reply: the same answer as from the run read', () => {
    const ended = endedRun({ status: 'SUCCEEDED', resultJson: '{"orderId":"7","ok":true}' });
    const read = { invocationId: 'run-1', status: 'SUCCEEDED', result: { ok: true, orderId: '7' }, errorMessage: null };
    expect(JSON.stringify(endedRunAnswer(endedInlineRun('run-1', ended), ACCEPTED))).toBe(JSON.stringify(endedRunAnswer(read, ACCEPTED)));
    const failed = endedRun({ status: 'FAILED', errorMessage: 'Out of stock' });
    expect(endedRunAnswer(endedInlineRun('run-1', failed), ACCEPTED)).toEqual({ error: 'Out of stock', invocationId: 'run-1', status: 'FAILED' });
  });
});
