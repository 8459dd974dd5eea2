import { compileDefinition, type Definition } from '@runline/engine';
import { checkTrigger, planRun, type PlanInput, type ProjectDefaults } from './run-plan.js';

const project: ProjectDefaults = {
  externalApiEnabled: true,
  defaultEnrollmentPolicy: 'ONE_TIME',
  defaultOnErrorPolicy: 'ABORT',
  defaultCallbackUrl: 'https://project.example/hook',
  defaultCallbackSecret: 'project-secret',
};

const chatbot = compileDefinition({
  schemaVersion: 1,
  bot: { start: 'e', nodes: { e: { type: 'end' } } },
  flow: { start: 'e', nodes: { e: { type: 'end' } } },
} as Definition);

const automation = (trigger: object) =>
  compileDefinition({ schemaVersion: 1, workflow: { trigger, start: 'e', nodes: { e: { type: 'end' } } } } as Definition);

const input = (overrides: Partial<PlanInput>): PlanInput => ({
  target: 'FLOW',
  mode: 'SYNC',
  body: {},
  compiled: chatbot,
  definitionVersion: 1,
  draftDefinition: null,
  project,
  session: null,
  ...overrides,
});

describe('planRun', () => {
  it('gives a flow the body less the control fields as payload, and the event as input', async () => {
    const plan = await planRun(
      input({
        body: { event: 'order', customerId: 'c-1', orderId: 7, triggerKey: 'k', dryRun: false, webhookUrl: 'https://x', webhookSecret: 's', runAt: 'x', delaySeconds: 1, enrollmentPolicy: 'EVERY_MATCH', onErrorPolicy: 'CONTINUE' },
      }),
    );
    expect(plan.payload).toEqual({ event: 'order', customerId: 'c-1', orderId: 7 });
    expect(plan.input).toEqual({ event: 'order' });
    expect(plan.graph).toBe('flow');
  });

  it("gives an automation the body's payload object", async () => {
    const plan = await planRun(input({ target: 'AUTOMATION', compiled: automation({}), body: { event: 'e', payload: { orderId: 'o' }, extra: 1 } }));
    expect(plan.payload).toEqual({ orderId: 'o' });
    expect(plan.input).toEqual({ event: 'e' });
    expect(plan.graph).toBe('workflow');
  });

  it('resolves policies and callback: request first, then the trigger, then the project', async () => {
    const trigger = { enrollmentPolicy: 'EVERY_MATCH', onErrorPolicy: 'CONTINUE', callback: { url: 'https://trigger.example/hook', secret: 'trigger-secret' } };
    const fromRequest = await planRun(
      input({ target: 'AUTOMATION', compiled: automation(trigger), body: { enrollmentPolicy: 'ONE_TIME', onErrorPolicy: 'ABORT', webhookUrl: 'https://request.example', webhookSecret: 'request-secret' } }),
    );
    expect(fromRequest).toMatchObject({ enrollmentPolicy: 'ONE_TIME', onErrorPolicy: 'ABORT', callback: { url: 'https://request.example', secret: 'request-secret' } });
    const fromTrigger = await planRun(input({ target: 'AUTOMATION', compiled: automation(trigger), body: {} }));
    expect(fromTrigger).toMatchObject({ enrollmentPolicy: 'EVERY_MATCH', onErrorPolicy: 'CONTINUE', callback: { url: 'https://trigger.example/hook', secret: 'trigger-secret' } });
    const fromProject = await planRun(input({ target: 'AUTOMATION', compiled: automation({}), body: {} }));
    expect(fromProject).toMatchObject({ enrollmentPolicy: 'ONE_TIME', onErrorPolicy: 'ABORT', callback: { url: 'https://project.example/hook', secret: 'project-secret' } });
  });

  it('enrolls the customerId, or what the enrollment key yields, for ONE_TIME only', async () => {
    expect((await planRun(input({ body: { customerId: 'c-9' } }))).enrollmentSubject).toBe('c-9');
    expect((await planRun(input({ body: { customerId: 'c-9', enrollmentPolicy: 'EVERY_MATCH' } }))).enrollmentSubject).toBeNull();
    const keyed = automation({ enrollmentKey: "payload.email & '/' & input.event" });
    expect((await planRun(input({ target: 'AUTOMATION', compiled: keyed, body: { event: 'signup', payload: { email: 'a@b' } } }))).enrollmentSubject).toBe('a@b/signup');
    expect((await planRun(input({ body: {} }))).enrollmentSubject).toBeNull();
  });

  it('retries an automation only when its trigger says so', async () => {
    expect((await planRun(input({ target: 'AUTOMATION', compiled: automation({}) }))).retry).toEqual({ maxAttempts: 1, backoffSeconds: 0 });
    expect((await planRun(input({ target: 'AUTOMATION', compiled: automation({ retry: { maxAttempts: 3, backoffSeconds: 2 } }) }))).retry).toEqual({
      maxAttempts: 3,
      backoffSeconds: 2,
    });
  });
});

describe('checkTrigger', () => {
  it('passes a chatbot call with event and customerId', async () => {
    const plan = await planRun(input({ body: { event: 'e', customerId: 'c', other: 1 } }));
    expect(checkTrigger(plan, chatbot)).toEqual({ valid: true, expectedKeys: ['event', 'customerId'], actualKeys: ['event', 'customerId', 'other'], missingKeys: [], errors: [] });
  });

  it('names every reason a call fails', async () => {
    const compiled = automation({ externalEnabled: false, key: 'orders', expectedPayload: { orderId: '', amount: 0 } });
    const plan = await planRun(input({ target: 'AUTOMATION', compiled, body: { triggerKey: 'other', payload: { orderId: 'o' } } }));
    expect(checkTrigger(plan, compiled)).toEqual({
      valid: false,
      expectedKeys: ['orderId', 'amount'],
      actualKeys: ['orderId'],
      missingKeys: ['amount'],
      errors: [
        'External trigger is not enabled on the Trigger node',
        'triggerKey "other" does not match the Trigger node\'s key "orders"',
        'Payload is missing required keys: amount',
      ],
    });
  });

  it('accepts the default key external_event when the trigger sets none', async () => {
    const plan = await planRun(input({ body: { triggerKey: 'external_event', event: 'e', customerId: 'c' } }));
    expect(checkTrigger(plan, chatbot).valid).toBe(true);
  });
});
