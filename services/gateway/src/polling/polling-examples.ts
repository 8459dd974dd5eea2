import { type Example, SUCCESS_ANSWER } from '../platform/api-docs/examples.js';

// The polling routes' examples (platform/api-docs/examples.ts says what they share and how they are checked).

export const REQUESTS = {
  registerPolling: { source: 'crm', pollKey: 'new-orders', pollEndpoint: 'https://crm.example.com/api/orders?status=new', authHeader: 'Bearer crm-api-key', intervalMs: 60000 },
} satisfies Record<string, Example>;

const pollingTrigger = {
  id: 'f831cc5b-fab9-4c2d-abf6-03414b1afa13',
  source: 'crm',
  pollKey: 'new-orders',
  dedupeField: 'id',
  pollEndpoint: 'https://crm.example.com/api/orders?status=new',
  authHeader: 'Bearer crm-api-key',
  intervalMs: 60000,
  lastSeenValue: 'ord_1041',
  lastPolledAt: '2026-03-02T09:14:00.120Z',
  nextPollAt: '2026-03-02T09:15:00.120Z',
  createdAt: '2026-03-01T16:02:11.450Z',
  updatedAt: '2026-03-02T09:14:00.120Z',
};

export const ANSWERS = {
  pollingTriggerSaved: { data: { ...pollingTrigger, lastSeenValue: null, lastPolledAt: null, nextPollAt: '2026-03-01T16:02:11.450Z', updatedAt: '2026-03-01T16:02:11.450Z' } },
  pollingTriggers: { data: [pollingTrigger] },
  success: SUCCESS_ANSWER,
} satisfies Record<string, Example>;
