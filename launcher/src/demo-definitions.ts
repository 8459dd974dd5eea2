/** The demo projects' definitions: the documented example of each project type (schema v1). */
export const DEMO_CHATBOT_DEFINITION = {
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
};

export const DEMO_AUTOMATION_DEFINITION = {
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
};
