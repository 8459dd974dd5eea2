import {
  CHATBOT_DEFAULT_EXPECTED_KEYS,
  DEFAULT_TRIGGER_KEY,
  expectedTriggerKeys,
  resolveTrigger,
  type Definition,
} from '@runline/engine';

const bot = { start: 'a', nodes: { a: { type: 'end' as const } } };

describe('expectedTriggerKeys', () => {
  it('given a chatbot flow without expectedPayload, when asked, then the keys are event and customerId', () => {
    const definition: Definition = { schemaVersion: 1, bot, flow: { trigger: { key: 'k' }, ...bot } };

    expect(expectedTriggerKeys('CHATBOT', definition)).toEqual(['event', 'customerId']);
    expect(CHATBOT_DEFAULT_EXPECTED_KEYS).toEqual(['event', 'customerId']);
  });

  it('given a chatbot without a flow, when asked, then the chatbot defaults apply', () => {
    expect(expectedTriggerKeys('CHATBOT', { schemaVersion: 1, bot })).toEqual(['event', 'customerId']);
  });

  it('given a chatbot flow with expectedPayload, when asked, then its top-level keys replace the defaults', () => {
    const definition: Definition = {
      schemaVersion: 1,
      bot,
      flow: { trigger: { expectedPayload: { ticketId: '', customer: { id: '' } } }, ...bot },
    };

    expect(expectedTriggerKeys('CHATBOT', definition)).toEqual(['ticketId', 'customer']);
  });

  it('given an automation with expectedPayload, when asked, then its top-level keys are required', () => {
    const definition: Definition = {
      schemaVersion: 1,
      workflow: { trigger: { expectedPayload: { orderId: '', amount: 0 } }, ...bot },
    };

    expect(expectedTriggerKeys('AUTOMATION', definition)).toEqual(['orderId', 'amount']);
  });

  it('given an automation without a trigger or expectedPayload, when asked, then no keys are required', () => {
    expect(expectedTriggerKeys('AUTOMATION', { schemaVersion: 1, workflow: bot })).toEqual([]);
    expect(expectedTriggerKeys('AUTOMATION', { schemaVersion: 1, workflow: { trigger: {}, ...bot } })).toEqual([]);
  });
});

describe('resolveTrigger', () => {
  it('given no trigger, when resolved, then it is enabled with the default key and no policies', () => {
    expect(resolveTrigger('AUTOMATION', undefined)).toEqual({
      externalEnabled: true,
      key: DEFAULT_TRIGGER_KEY,
      expectedKeys: [],
    });
    expect(DEFAULT_TRIGGER_KEY).toBe('external_event');
  });

  it('given a trigger that sets everything, when resolved, then its own settings win', () => {
    const resolved = resolveTrigger('AUTOMATION', {
      externalEnabled: false,
      key: 'orders',
      expectedPayload: { orderId: '' },
      enrollmentPolicy: 'ONE_TIME',
      enrollmentKey: 'payload.orderId',
      onErrorPolicy: 'CONTINUE',
      callback: { url: 'https://hooks.example.com', secret: 's' },
      retry: { maxAttempts: 2, backoffSeconds: 0 },
    });

    expect(resolved).toEqual({
      externalEnabled: false,
      key: 'orders',
      expectedKeys: ['orderId'],
      enrollmentPolicy: 'ONE_TIME',
      enrollmentKey: 'payload.orderId',
      onErrorPolicy: 'CONTINUE',
      callback: { url: 'https://hooks.example.com', secret: 's' },
      retry: { maxAttempts: 2, backoffSeconds: 0 },
    });
  });
});
