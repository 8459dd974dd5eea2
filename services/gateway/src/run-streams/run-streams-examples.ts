import { END_OFFSET, ID_STRIDE, PING, serverSentEvent } from './run-stream-events.js';

const RUN = '3f0c2a9e-5b7d-4c1e-9a40-6d2f8e1b7c55';
const at = (seconds: number) => `2026-03-02T09:15:${String(seconds).padStart(2, '0')}.000Z`;

/** A chatbot flow's run followed from its start: the text a client reads, event by event. */
export const RUN_STREAM_EXAMPLE = [
  serverSentEvent(1 * ID_STRIDE, 'status', { status: 'QUEUED', at: at(0) }),
  serverSentEvent(2 * ID_STRIDE, 'status', { status: 'RUNNING', at: at(1) }),
  serverSentEvent(2 * ID_STRIDE + 1, 'message', { text: 'Order 42' }),
  serverSentEvent(2 * ID_STRIDE + 2, 'step', {
    step: { nodeId: 'n1', type: 'message', status: 'SUCCEEDED', startedAt: at(1), completedAt: at(1), durationMs: 1 },
  }),
  serverSentEvent(2 * ID_STRIDE + 3, 'step', { step: { nodeId: 'n2', type: 'end', status: 'SUCCEEDED', startedAt: at(1), completedAt: at(1), durationMs: 0 } }),
  PING,
  serverSentEvent(3 * ID_STRIDE, 'status', { status: 'SUCCEEDED', at: at(2) }),
  serverSentEvent(3 * ID_STRIDE + END_OFFSET, 'end', { invocationId: RUN, status: 'SUCCEEDED', '…': 'the full invocation, as GET answers it' }),
].join('');

/** The console's project stream: one logs row per change of a run. */
export const PROJECT_RUNS_STREAM_EXAMPLE =
  PING +
  serverSentEvent(null, 'run', {
    invocationId: RUN,
    projectId: '9b1e4c2d-7a3f-4e8b-8c5d-1f2a3b4c5d6e',
    status: 'RUNNING',
    mode: 'ASYNC',
    targetType: 'FLOW',
    triggerSource: 'WEBHOOK',
    createdAt: at(0),
    startedAt: at(1),
    completedAt: null,
    durationMs: null,
    errorMessage: null,
    scheduledFor: null,
  });
