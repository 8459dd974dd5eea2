import {
  create,
  EVENT_TYPES,
  InvocationQueuedSchema,
  InvocationStartedSchema,
  InvocationSucceededSchema,
  newEnvelope,
  RunProgressSchema,
  type Envelope,
  type RunProgress,
} from '@runline/contracts';
import { RunStream } from './run-stream.js';

const RUN = { orgId: 'org-1', projectId: 'project-1', invocationId: 'run-1' };
const STEP = { nodeId: 'say', type: 'message', status: 'SUCCEEDED', startedAt: '2026-01-01T00:00:00.000Z', completedAt: '2026-01-01T00:00:00.001Z', durationMs: 1 };

/** The run's recorded events: queued, started, then succeeded after one message step. */
const HISTORY: Envelope[] = [
  newEnvelope({ ...RUN, type: EVENT_TYPES.INVOCATION_QUEUED, sequence: 1, payload: create(InvocationQueuedSchema, {}) }),
  newEnvelope({ ...RUN, type: EVENT_TYPES.INVOCATION_STARTED, sequence: 2, payload: create(InvocationStartedSchema, { attempt: 1 }) }),
  newEnvelope({
    ...RUN,
    type: EVENT_TYPES.INVOCATION_SUCCEEDED,
    sequence: 3,
    payload: create(InvocationSucceededSchema, { resultJson: '{"ok":true}', stepsJson: JSON.stringify([STEP]), messagesJson: '["Hello"]' }),
  }),
];

function progress(index: number, item: RunProgress['item']): RunProgress {
  return create(RunProgressSchema, { ...RUN, afterSequence: 2n, index, item });
}
const MESSAGE = progress(1, { case: 'messageText', value: 'Hello' });
const STEP_ITEM = progress(2, { case: 'stepJson', value: JSON.stringify(STEP) });

/** A stream over a run whose history holds `recorded` of HISTORY's events; what it writes, as ids and event names. */
function streamOf(recorded: number, lastEventId = 0) {
  const written: string[] = [];
  let closed = false;
  const stream = new RunStream(
    {
      write: (text) => written.push(text),
      close: () => (closed = true),
      eventsAfter: (after) => Promise.resolve(HISTORY.slice(0, recorded).filter((envelope) => Number(envelope.sequence) > after)),
      invocation: () => Promise.resolve({ status: 'SUCCEEDED' }),
      onError: (error) => {
        throw error;
      },
    },
    lastEventId,
  );
  const sent = () => written.map((text) => /^id: (\d+)\nevent: (\w+)/.exec(text)!.slice(1, 3).join(' '));
  return { stream, sent, isClosed: () => closed };
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 10));

describe('RunStream', () => {
  it("sends live items heard before the event that starts their segment, once that event arrives (core NATS may overtake JetStream)", async () => {
    const { stream, sent } = streamOf(1);
    stream.start();
    await settle();
    stream.onProgress(MESSAGE);
    stream.onProgress(STEP_ITEM);
    await settle();
    expect(sent()).toEqual(['10000 status']);
    stream.onEvent(HISTORY[1]!);
    await settle();
    expect(sent()).toEqual(['10000 status', '20000 status', '20001 message', '20002 step']);
  });

  it('resumed after a live item, sends the next live items of the segment as they come, then the rest once recorded, each once', async () => {
    const { stream, sent, isClosed } = streamOf(2, 20001);
    stream.start();
    await settle();
    stream.onProgress(STEP_ITEM);
    await settle();
    expect(sent()).toEqual(['20002 step']);
    stream.onEvent(HISTORY[2]!);
    await settle();
    expect(sent()).toEqual(['20002 step', '30000 status', '39999 end']);
    expect(isClosed()).toBe(true);
  });

  it('replays the recorded messages where they were said, with the ids the live items had', async () => {
    const { stream, sent } = streamOf(3);
    stream.start();
    await settle();
    expect(sent()).toEqual(['10000 status', '20000 status', '20001 message', '20002 step', '30000 status', '39999 end']);
  });

  it('resumed between the final status and end, sends end alone', async () => {
    const { stream, sent } = streamOf(3, 30000);
    stream.start();
    await settle();
    expect(sent()).toEqual(['39999 end']);
  });
});
