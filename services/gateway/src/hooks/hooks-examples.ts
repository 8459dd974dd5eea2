import { EXAMPLE_GATEWAY, type Example } from '../platform/api-docs/examples.js';

// The inbound hook routes' examples (platform/api-docs/examples.ts says what they share and how they are checked).

const HOOK_IDS = {
  hook: '7a0a7197-dfb0-4dc5-9fbb-87497208163f',
  hookRun: '2f6a8c0e-1b3d-4f5a-9c7e-6d8b0a2c4e6f',
} as const;

export const REQUESTS = {
  hookDelivery: { event: 'order.created', customerId: 'c-1042', orderId: '42' },
  createWebhook: { name: 'Shop orders', rateLimitPerMinute: 600 },
} satisfies Record<string, Example>;

const hookUrl = `${EXAMPLE_GATEWAY}/v1/hooks/${HOOK_IDS.hook}`;

export const ANSWERS = {
  hookAccepted: { invocationId: HOOK_IDS.hookRun, status: 'QUEUED' },
  createdHook: { id: HOOK_IDS.hook, name: 'Shop orders', url: hookUrl, secret: 'rlwhsec_CMEnt84FRsY9Qr0AeWtPjNl-pWPmZJhBuQRpyXrJ-QA', status: 'ACTIVE', rateLimitPerMinute: 600, createdAt: '2026-03-02T09:25:22.626Z' },
  hooks: { data: [{ id: HOOK_IDS.hook, name: 'Shop orders', url: hookUrl, status: 'ACTIVE', rateLimitPerMinute: 600, createdAt: '2026-03-02T09:25:22.626Z' }] },
} satisfies Record<string, Example>;
