import { type Example, IDS } from '../platform/api-docs/examples.js';

// The organization routes' examples (platform/api-docs/examples.ts says what they share and how they are checked).

export const REQUESTS = {
  createOrganization: { name: 'Acme Shop' },
  setPlan: { monthlyQuota: 10000, rateLimitPerMinute: 120, rateLimitWindowMs: 60000, renewalDay: 1 },
  addMember: { userId: 'auth0|ada', role: 'EDITOR' },
} satisfies Record<string, Example>;

export const ANSWERS = {
  organization: { orgId: IDS.org, name: 'Acme Shop' },
  organizations: { data: [{ orgId: IDS.org, name: 'Acme Shop', role: 'OWNER' }] },
  plan: { orgId: IDS.org, monthlyQuota: 10000, rateLimitPerMinute: 120, rateLimitWindowMs: 60000, renewalDay: 1 },
  planUsage: { monthlyQuota: 10000, rateLimitPerMinute: 120, rateLimitWindowMs: 60000, renewalDay: 1, periodStart: '2026-03-01T00:00:00.000Z', used: 1873 },
  member: { orgId: IDS.org, userId: 'auth0|ada', role: 'EDITOR' },
} satisfies Record<string, Example>;
