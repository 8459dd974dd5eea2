import { type Example, IDS } from '../platform/api-docs/examples.js';

// The runs routes' examples (platform/api-docs/examples.ts says what they share and how they are checked).

const RUN_IDS = {
  syncRun: '3a9f1e52-6c7d-4b8e-a1f2-0c3d4e5f6a7b',
  scheduledRun: 'c41d8e27-9b6a-4c3f-a2e1-5f4d3c2b1a09',
  botRun: 'e5b3a1c9-2d4f-4e6a-b8c7-9a0b1c2d3e4f',
} as const;

export const REQUESTS = {
  botMessage: { message: 'Where is my order 42?', sessionId: 'chat-7f3a', userId: 'c-1042', userName: 'Ada', platform: 'web' },
  botInvoke: { message: 'Where is my order 42?', userName: 'Ada', webhookUrl: 'https://shop.example.com/runline/callback', webhookSecret: 'cb-secret-2f9e71' },
  flowTrigger: { event: 'order.created', customerId: 'c-1042', orderId: '42' },
  flowTriggerAsync: {
    event: 'order.created',
    customerId: 'c-1042',
    orderId: '42',
    delaySeconds: 3600,
    webhookUrl: 'https://shop.example.com/runline/callback',
    webhookSecret: 'cb-secret-2f9e71',
  },
  automationTrigger: { event: 'order.paid', payload: { orderId: '42', amount: 10 }, triggerKey: 'external_event' },
  automationTriggerAsync: { event: 'order.paid', payload: { orderId: '42', amount: 10 }, runAt: '2026-03-03T09:00:00Z', onErrorPolicy: 'CONTINUE' },
  modifyInvocation: { action: 'reschedule', delaySeconds: 7200 },
} satisfies Record<string, Example>;

const invocation = {
  invocationId: RUN_IDS.syncRun,
  status: 'SUCCEEDED',
  environment: 'PRODUCTION',
  triggerSource: 'WEBHOOK',
  mode: 'SYNC',
  targetType: 'AUTOMATION',
  startedAt: '2026-03-02T09:15:04.211Z',
  completedAt: '2026-03-02T09:15:04.236Z',
  durationMs: 25,
  errorMessage: null,
  requestPayload: { event: 'order.paid', payload: { amount: 10, orderId: '42' } },
  result: { ok: true, orderId: '42' },
  trace: { graph: 'workflow', steps: 1, runtime: 'runline-engine/1', startedAt: '2026-03-02T09:15:04.214Z', durationMs: 1, completedAt: '2026-03-02T09:15:04.215Z', definitionVersion: 2 },
  steps: [{ type: 'return', nodeId: 'n1', status: 'SUCCEEDED', startedAt: '2026-03-02T09:15:04.214Z', durationMs: 1, completedAt: '2026-03-02T09:15:04.215Z' }],
  callbackAttempts: [],
  scheduledFor: null,
  schedulerStatus: null,
  schedulerJobName: null,
  pendingApproval: null,
  createdAt: '2026-03-02T09:15:04.211Z',
  updatedAt: '2026-03-02T09:15:04.236Z',
  attempts: 1,
  maxAttempts: 1,
  onErrorPolicy: 'ABORT',
  enrollmentPolicy: 'EVERY_MATCH',
  definitionVersion: 2,
};

const rescheduled = {
  ...invocation,
  invocationId: RUN_IDS.scheduledRun,
  status: 'SCHEDULED',
  triggerSource: 'SCHEDULE',
  mode: 'ASYNC',
  startedAt: null,
  completedAt: null,
  durationMs: null,
  requestPayload: { event: 'order.paid', runAt: '2026-03-03T09:00:00Z', payload: { amount: 10, orderId: '42' } },
  result: null,
  trace: null,
  steps: [],
  scheduledFor: '2026-03-02T11:15:05.000Z',
  schedulerStatus: 'SCHEDULED',
  schedulerJobName: `run-${RUN_IDS.scheduledRun}`,
  updatedAt: '2026-03-02T09:15:05.002Z',
  attempts: 0,
  maxAttempts: 3,
};

const logRow = {
  invocationId: RUN_IDS.syncRun,
  projectId: IDS.automation,
  status: 'SUCCEEDED',
  mode: 'SYNC',
  targetType: 'AUTOMATION',
  triggerSource: 'WEBHOOK',
  createdAt: '2026-03-02T09:15:04.211Z',
  startedAt: '2026-03-02T09:15:04.211Z',
  completedAt: '2026-03-02T09:15:04.236Z',
  durationMs: 25,
  errorMessage: null,
  scheduledFor: null,
};

export const ANSWERS = {
  botMessage: { invocationId: RUN_IDS.botRun, status: 'SUCCEEDED', result: { messages: ['Hi Ada'], actions: [], raw: { status: 'SUCCEEDED', result: null, waitingForInput: false } }, sessionId: 'chat-7f3a' },
  // Neither sessionId nor userId sent: a new session.
  botInvoke: { invocationId: RUN_IDS.botRun, status: 'QUEUED', sessionId: '67c503a6-0f35-4227-8ed8-5638705d433a' },
  flowTrigger: { invocationId: RUN_IDS.syncRun, status: 'SUCCEEDED', result: { messages: ['Order 42 is on its way'], actions: [] } },
  automationTrigger: { invocationId: RUN_IDS.syncRun, status: 'SUCCEEDED', result: { ok: true, orderId: '42' } },
  runAccepted: { invocationId: IDS.asyncRun, status: 'SCHEDULED', scheduledFor: '2026-03-02T10:15:04.460Z' },
  dryRun: {
    invocationId: null,
    status: 'VALID',
    dryRun: true,
    result: { validation: { valid: true, expectedKeys: ['event', 'customerId'], actualKeys: ['event', 'customerId', 'orderId'], missingKeys: [], errors: [] } },
  },
  invocation,
  rescheduled,
  runLogPage: { data: [logRow], nextCursor: 'MjAyNi0wMy0wMlQwOToxNTowNC4yMTEwMDBafDNhOWYxZTUy' },
  metrics: {
    from: '2026-03-01T10:00:00.000Z',
    to: '2026-03-02T10:00:00.000Z',
    bucket: 'day',
    totals: { triggered: 412, succeeded: 398, failed: 9, timeout: 1, cancelled: 2, inProgress: 2, waiting: 3 },
    waitingByReason: { concurrency: 2, throttle: 1, debounce: 0, project: 0 },
    medianDurationMs: 26,
    p95DurationMs: 48,
    callbacks: { delivered: 151, failed: 3 },
    series: [
      { start: '2026-03-01T00:00:00.000Z', triggered: 230, succeeded: 224, failed: 5 },
      { start: '2026-03-02T00:00:00.000Z', triggered: 182, succeeded: 174, failed: 4 },
    ],
    recent: [logRow],
    schedules: [{ id: 'daily-report', fires: 2, succeeded: 2, failed: 0, latenessP50Ms: 3, latenessP99Ms: 7, latenessMaxMs: 7 }],
  },
} satisfies Record<string, Example>;
