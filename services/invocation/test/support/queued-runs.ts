import { randomUUID } from 'node:crypto';
import type { RequestInfo } from '../../src/lifecycle/invocation-event.js';
import { withHistory } from '../../src/lifecycle/run-history.js';
import type { NewInvocation } from '../../src/runs/new-runs.repository.js';

/** An async flow run's request as the tests of the write side record it. */
export const ASYNC_FLOW_REQUEST: RequestInfo = {
  targetType: 'FLOW',
  mode: 'ASYNC',
  triggerSource: 'WEBHOOK',
  environment: 'PRODUCTION',
  requestPayload: {},
  enrollmentPolicy: 'ONE_TIME',
  onErrorPolicy: 'ABORT',
  startedByTokenId: null,
  definitionVersion: 1,
  sessionId: null,
  maxAttempts: 1,
};

/** A new async flow run of `projectId`, QUEUED unless said otherwise, with its InvocationQueued event. */
export function newQueuedRun(
  projectId: string,
  options: { orgId?: string; key?: string | null; at?: Date; status?: 'QUEUED' | 'SCHEDULED'; request?: RequestInfo } = {},
): NewInvocation {
  return withHistory({
    id: randomUUID(),
    orgId: options.orgId ?? randomUUID(),
    projectId,
    targetType: 'FLOW',
    mode: 'ASYNC',
    status: options.status ?? 'QUEUED',
    attempt: 0,
    maxAttempts: 1,
    waitingJob: null,
    lease: null,
    sealedPlan: 'sealed',
    occurredAt: options.at ?? new Date(),
    events: [{ type: 'InvocationQueued', request: options.request ?? ASYNC_FLOW_REQUEST }],
    idempotency: options.key ? { projectId, targetType: 'FLOW', mode: 'ASYNC', key: options.key } : null,
    messages: [],
  });
}
