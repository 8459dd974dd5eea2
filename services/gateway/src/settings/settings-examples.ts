import type { Example } from '../platform/api-docs/examples.js';

// The API settings routes' examples (platform/api-docs/examples.ts says what they share and how they are checked).

export const REQUESTS = {
  updateApiSettings: { defaultCallbackUrl: 'https://shop.example.com/runline/callback', defaultCallbackSecret: 'cb-secret-2f9e71', rateLimitPerMinute: 300 },
} satisfies Record<string, Example>;

const apiSettings = {
  externalApiEnabled: true,
  defaultEnrollmentPolicy: 'ONE_TIME',
  defaultOnErrorPolicy: 'ABORT',
  defaultCallbackUrl: 'https://shop.example.com/runline/callback',
  defaultCallbackSecretSet: true,
  rateLimitPerMinute: 300,
  rateLimitWindowMs: null,
  maxConcurrentRuns: null,
  updatedAt: '2026-03-02T09:20:31.007Z',
};

export const ANSWERS = {
  apiSettings,
} satisfies Record<string, Example>;
