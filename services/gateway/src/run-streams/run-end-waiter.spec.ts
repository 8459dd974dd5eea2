import {
  create,
  EVENT_TYPES,
  InvocationFailedSchema,
  InvocationRetriesExhaustedSchema,
  InvocationSucceededSchema,
  InvocationTimedOutSchema,
  newEnvelope,
  type Envelope,
} from '@runline/contracts';
import { endedRunOf, RunEndWaiter } from './run-end-waiter.js';
import type { RunEventsFeed, RunEventsFollower } from './run-events-feed.js';
import type { RunHistoryClient } from './run-history.client.js';

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

/** The replica's feed, as far as a waiter follows it: events are delivered by hand. */
class HandFedFeed {
  private readonly followers = new Map<string, RunEventsFollower>();
  followRun(invocationId: string, follower: RunEventsFollower): () => void {
    this.followers.set(invocationId, follower);
    return () => this.followers.delete(invocationId);
  }
  deliver(envelope: Envelope): void {
    this.followers.get(envelope.invocationId)?.onEvent(envelope);
  }
}

/** The invocation service's answer to a read of the run, given when the test says. */
function heldRead(): { history: RunHistoryClient; answer(invocation: Record<string, unknown>): void; reads(): number } {
  let reads = 0;
  let answer: (invocation: Record<string, unknown>) => void = () => undefined;
  const history = {
    invocation: () => {
      reads += 1;
      return new Promise<Record<string, unknown>>((resolve) => (answer = resolve));
    },
  } as unknown as RunHistoryClient;
  return { history, answer: (invocation) => answer(invocation), reads: () => reads };
}

const STILL_WAITING = 'still waiting';
const settledSoon = <T>(promise: Promise<T>) => Promise.race([promise, new Promise<typeof STILL_WAITING>((resolve) => setTimeout(() => resolve(STILL_WAITING), 200))]);

describe('RunEndWaiter.endedWithin', () => {
  const succeeded = newEnvelope({ ...RUN, type: EVENT_TYPES.INVOCATION_SUCCEEDED, payload: create(InvocationSucceededSchema, { resultJson: '{"ok":true}' }) });

  it('answers an end heard while its first read is under way at once, without waiting for that read', async () => {
    const feed = new HandFedFeed();
    const read = heldRead();
    const waiter = new RunEndWaiter(feed as unknown as RunEventsFeed, read.history);
    const waiting = waiter.endedWithin('org-1', 'run-1', 5_000);
    expect(read.reads()).toBe(1);
    feed.deliver(succeeded);
    expect(await settledSoon(waiting)).toEqual({ invocationId: 'run-1', status: 'SUCCEEDED', result: { ok: true }, errorMessage: null });
    read.answer({ invocationId: 'run-1', status: 'RUNNING' });
  });

  it('answers from the read a run that had ended before it was followed', async () => {
    const read = heldRead();
    const waiter = new RunEndWaiter(new HandFedFeed() as unknown as RunEventsFeed, read.history);
    const waiting = waiter.endedWithin('org-1', 'run-1', 5_000);
    const ended = { invocationId: 'run-1', status: 'FAILED', result: null, errorMessage: 'Out of stock' };
    read.answer(ended);
    expect(await settledSoon(waiting)).toEqual(ended);
  });

  it('a read that finds the run going on waits for its end on the feed', async () => {
    const feed = new HandFedFeed();
    const read = heldRead();
    const waiter = new RunEndWaiter(feed as unknown as RunEventsFeed, read.history);
    const waiting = waiter.endedWithin('org-1', 'run-1', 5_000);
    read.answer({ invocationId: 'run-1', status: 'RUNNING' });
    expect(await settledSoon(waiting)).toBe(STILL_WAITING);
    feed.deliver(succeeded);
    expect(await settledSoon(waiting)).toMatchObject({ status: 'SUCCEEDED', result: { ok: true } });
    expect(read.reads()).toBe(1);
  });
});
