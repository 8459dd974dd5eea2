import { type Example, SUCCESS_ANSWER } from '../platform/api-docs/examples.js';

// The dead-letter routes' examples (platform/api-docs/examples.ts says what they share and how they are checked).

export const REQUESTS = {
  bulkReplay: { filter: { source: 'crm', from: '2026-03-01T00:00:00Z', to: '2026-03-02T00:00:00Z' }, dryRun: false },
} satisfies Record<string, Example>;

const deadLetterPage = {
  data: [
    {
      id: 'd052816c-4bd6-4cac-8390-94d365b9eea0',
      source: 'crm',
      targetType: 'polling',
      triggerKey: 'new-orders',
      requestPayload: { pollKey: 'new-orders', pollEndpoint: 'https://crm.example.com/api/orders?status=new' },
      failureReason: 'Poll request failed: 503 Service Unavailable',
      attemptCount: 1,
      replayedAt: null,
      replayStatus: null,
      createdAt: '2026-03-02T08:40:00.310Z',
      updatedAt: '2026-03-02T08:40:00.310Z',
    },
  ],
  total: 1,
  limit: 50,
  offset: 0,
};

export const ANSWERS = {
  deadLetterPage,
  success: SUCCESS_ANSWER,
  bulkReplay: { matched: 3, succeeded: 2, failed: 1, pending: 0, remaining: 0 },
} satisfies Record<string, Example>;
