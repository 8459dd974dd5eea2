import type { Example } from '../platform/api-docs/examples.js';

// The API token routes' examples (platform/api-docs/examples.ts says what they share and how they are checked).

const TOKEN_ID = '1ed82aca-6fbb-46d5-971c-a70ba69c45fb';

export const REQUESTS = {
  createApiToken: { name: 'CRM sync', scopes: ['flow:trigger'], expiresAt: '2027-12-31' },
} satisfies Record<string, Example>;

export const ANSWERS = {
  issuedToken: {
    id: TOKEN_ID,
    name: 'CRM sync',
    prefix: 'rl_ext_YlLV',
    scopes: ['flow:trigger'],
    expiresAt: '2027-12-31T00:00:00.000Z',
    createdAt: '2026-03-02T09:22:17.317Z',
    token: 'rl_ext_YlLVhsMlhgjktAbRzhKVLxbGBaNn6Gl72XSWNL',
  },
  tokens: {
    data: [{ id: TOKEN_ID, name: 'CRM sync', prefix: 'rl_ext_YlLV', scopes: ['flow:trigger'], expiresAt: '2027-12-31T00:00:00.000Z', lastUsedAt: '2026-03-02T09:15:04.200Z', createdAt: '2026-03-02T09:22:17.317Z' }],
  },
} satisfies Record<string, Example>;
