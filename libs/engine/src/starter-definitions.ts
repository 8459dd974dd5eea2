import type { ProjectType } from './definition.types.js';

/**
 * The documented example of each project type (schema v1): the demo projects' definitions
 * (launcher) and what the console offers a project that has no definition yet.
 */
export const STARTER_DEFINITIONS: Readonly<Record<ProjectType, object>> = {
  CHATBOT: {
    schemaVersion: 1,
    bot: {
      start: 'hello',
      nodes: {
        hello: { type: 'message', text: 'Hi {{ input.userName }}', next: 'end' },
        end: { type: 'end' },
      },
    },
    flow: {
      trigger: { externalEnabled: true, key: 'external_event' },
      start: 'n1',
      nodes: {
        n1: { type: 'message', text: 'Order {{ payload.orderId }}', next: 'n2' },
        n2: { type: 'end' },
      },
    },
  },
  AUTOMATION: {
    schemaVersion: 1,
    workflow: {
      trigger: {
        externalEnabled: true,
        key: 'external_event',
        expectedPayload: { orderId: '', amount: 0 },
        enrollmentPolicy: 'EVERY_MATCH',
        onErrorPolicy: 'ABORT',
        retry: { maxAttempts: 3, backoffSeconds: 1 },
      },
      start: 'n1',
      nodes: { n1: { type: 'return', value: "{ 'ok': true, 'orderId': payload.orderId }" } },
    },
  },
};
