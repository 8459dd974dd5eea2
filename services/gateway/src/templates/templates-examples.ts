import type { Example } from '../platform/api-docs/examples.js';

// The template routes' examples (platform/api-docs/examples.ts says what they share and how they are checked).

export const REQUESTS = {
  template: { name: 'New order', endpoint: 'flows.trigger', body: { event: 'order.created', customerId: 'c-1042', orderId: '42' } },
} satisfies Record<string, Example>;

const template = {
  id: '1fe6f65f-1959-41bf-9ccc-54ffbbc10e5b',
  name: 'New order',
  endpoint: 'flows.trigger',
  body: { event: 'order.created', customerId: 'c-1042', orderId: '42' },
  createdAt: '2026-03-01T16:10:42.608Z',
  updatedAt: '2026-03-01T16:10:42.608Z',
};

export const ANSWERS = {
  template,
  templates: { data: [template] },
} satisfies Record<string, Example>;
