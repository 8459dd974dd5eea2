import { create, EVENT_TYPES, InvocationFailedSchema, InvocationRetriesExhaustedSchema, InvocationSucceededSchema, InvocationTimedOutSchema, newEnvelope } from '@runline/contracts';
import { endedRunOf } from './run-end-waiter.js';

const RUN = { orgId: 'org-1', projectId: 'project-1', invocationId: 'run-1', sequence: 3 };

describe('endedRunOf: the answer to an ended run, from its final event', () => {
  it('a success: its status and result', () => {
    const envelope = newEnvelope({ ...RUN, type: EVENT_TYPES.INVOCATION_SUCCEEDED, payload: create(InvocationSucceededSchema, { resultJson: '{"ok":true}', stepsJson: '[]' }) });
    expect(endedRunOf(envelope)).toEqual({ invocationId: 'run-1', status: 'SUCCEEDED', result: { ok: true }, errorMessage: null });
  });

  it('a failure and a timeout: their status and error message, no result', () => {
    const failed = newEnvelope({ ...RUN, type: EVENT_TYPES.INVOCATION_FAILED, payload: create(InvocationFailedSchema, { errorMessage: 'Out of stock' }) });
    expect(endedRunOf(failed)).toEqual({ invocationId: 'run-1', status: 'FAILED', result: null, errorMessage: 'Out of stock' });
    const timedOut = newEnvelope({ ...RUN, type: EVENT_TYPES.INVOCATION_TIMED_OUT, payload: create(InvocationTimedOutSchema, { errorMessage: 'Time limit of 30000 ms exceeded' }) });
    expect(endedRunOf(timedOut)).toMatchObject({ status: 'TIMEOUT', errorMessage: 'Time limit of 30000 ms exceeded' });
  });

  it('an event that changes no status: null (the run is read instead)', () => {
    expect(endedRunOf(newEnvelope({ ...RUN, type: EVENT_TYPES.INVOCATION_RETRIES_EXHAUSTED, payload: create(InvocationRetriesExhaustedSchema, {}) }))).toBeNull();
  });
});
