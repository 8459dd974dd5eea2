import { evaluateFlowControl, validateDefinition, type CompiledFlowControl, type DefinitionValidation } from '@runline/engine';

const workflowWithFlowControl = (flowControl: unknown) => ({
  schemaVersion: 1,
  workflow: { trigger: { flowControl }, start: 'n1', nodes: { n1: { type: 'end' } } },
});

const flowWithFlowControl = (flowControl: unknown) => ({
  schemaVersion: 1,
  bot: { start: 'b', nodes: { b: { type: 'end' } } },
  flow: { trigger: { flowControl }, start: 'n1', nodes: { n1: { type: 'end' } } },
});

function refusal(result: DefinitionValidation): string {
  if (result.ok) throw new Error('expected the definition to be refused, but it validated');
  expect(result.errors).toHaveLength(1);
  return result.summary;
}

function compiledOf(result: DefinitionValidation, graph: 'workflow' | 'flow' = 'workflow'): CompiledFlowControl {
  if (!result.ok) throw new Error(result.summary);
  const flowControl = result.compiled.graphs[graph]?.trigger?.flowControl;
  if (!flowControl) throw new Error('no flowControl compiled');
  return flowControl;
}

describe('flowControl on a trigger', () => {
  describe('given valid settings', () => {
    it('when the DESIGN example is saved, then it compiles once with every part', async () => {
      const result = validateDefinition(
        'AUTOMATION',
        workflowWithFlowControl({
          concurrency: [{ limit: 5, key: 'payload.customerId' }],
          throttle: { limit: 100, periodSeconds: 60, burst: 0, key: 'payload.customerId' },
          debounce: { periodSeconds: 5, maxWaitSeconds: 60, key: 'payload.customerId' },
          priority: 'payload.vip ? 60 : 0',
        }),
      );

      const compiled = compiledOf(result);
      expect(compiled.concurrency).toHaveLength(1);
      expect(compiled.concurrency[0]!.limit).toBe(5);
      expect(compiled.throttle).toMatchObject({ limit: 100, periodSeconds: 60, burst: 0 });
      expect(compiled.debounce).toMatchObject({ periodSeconds: 5, maxWaitSeconds: 60 });
      await expect(evaluateFlowControl(compiled, { payload: { customerId: 'c1', vip: true } })).resolves.toEqual({
        concurrencyKeys: ['c1'],
        throttleKey: 'c1',
        debounceKey: 'c1',
        prioritySeconds: 60,
      });
    });

    it('when a chatbot flow trigger has flowControl, then it compiles too', () => {
      expect(compiledOf(validateDefinition('CHATBOT', flowWithFlowControl({ concurrency: [{ limit: 1 }] })), 'flow').concurrency[0]!.limit).toBe(1);
    });

    it('when a key yields nothing or is absent, then the key is "", and other values are written as JSON', async () => {
      const compiled = compiledOf(validateDefinition('AUTOMATION', workflowWithFlowControl({ concurrency: [{ limit: 1, key: 'payload.missing' }, { limit: 2 }], throttle: { limit: 1, periodSeconds: 1, key: 'payload.n' } })));

      await expect(evaluateFlowControl(compiled, { payload: { n: 7 } })).resolves.toEqual({ concurrencyKeys: ['', ''], throttleKey: '7', prioritySeconds: 0 });
    });

    it('when a computed priority is out of range or not a number, then it is clamped or 0 at run time', async () => {
      const compiled = compiledOf(validateDefinition('AUTOMATION', workflowWithFlowControl({ priority: 'payload.p' })));

      await expect(evaluateFlowControl(compiled, { payload: { p: 9000 } })).resolves.toMatchObject({ prioritySeconds: 600 });
      await expect(evaluateFlowControl(compiled, { payload: { p: -9000 } })).resolves.toMatchObject({ prioritySeconds: -600 });
      await expect(evaluateFlowControl(compiled, { payload: { p: 'soon' } })).resolves.toMatchObject({ prioritySeconds: 0 });
    });

    it('when keys read the input, then they see it', async () => {
      const compiled = compiledOf(validateDefinition('AUTOMATION', workflowWithFlowControl({ concurrency: [{ limit: 1, key: 'input.sessionId' }] })));

      await expect(evaluateFlowControl(compiled, { payload: {}, input: { sessionId: 's9' } })).resolves.toMatchObject({ concurrencyKeys: ['s9'] });
    });
  });

  describe('given invalid settings, the save is refused with a message naming the trigger', () => {
    it.each([
      ['a concurrency limit below 1', { concurrency: [{ limit: 0 }] }, 'workflow.trigger: flowControl.concurrency[0].limit must be between 1 and 100000 (got 0)'],
      ['a fractional concurrency limit', { concurrency: [{ limit: 1.5 }] }, 'workflow.trigger: flowControl.concurrency[0].limit must be an integer between 1 and 100000'],
      ['three concurrency entries', { concurrency: [{ limit: 1 }, { limit: 2 }, { limit: 3 }] }, 'workflow.trigger: flowControl.concurrency has 3 entries; at most 2 are allowed'],
      ['a concurrency that is no array', { concurrency: { limit: 1 } }, 'workflow.trigger: flowControl.concurrency must be an array'],
      ['a key that does not compile', { concurrency: [{ limit: 1, key: 'payload.(' }] }, 'workflow.trigger: flowControl.concurrency[0].key is not a valid expression'],
      ['a key that is no string', { throttle: { limit: 1, periodSeconds: 1, key: 5 } }, 'workflow.trigger: flowControl.throttle.key must be a JSONata expression (a string)'],
      ['a throttle limit below 1', { throttle: { limit: 0, periodSeconds: 60 } }, 'workflow.trigger: flowControl.throttle.limit must be between 1 and 100000 (got 0)'],
      ['a throttle without a period', { throttle: { limit: 10 } }, 'workflow.trigger: flowControl.throttle.periodSeconds must be a number of seconds'],
      ['a negative burst', { throttle: { limit: 10, periodSeconds: 1, burst: -1 } }, 'workflow.trigger: flowControl.throttle.burst must be between 0 and 100000 (got -1)'],
      ['a debounce period of 0', { debounce: { periodSeconds: 0 } }, 'workflow.trigger: flowControl.debounce.periodSeconds must be above 0 and at most 86400 (got 0)'],
      ['a debounce maxWait below its period', { debounce: { periodSeconds: 10, maxWaitSeconds: 5 } }, 'workflow.trigger: flowControl.debounce.maxWaitSeconds must be at least periodSeconds (10)'],
      ['a constant priority above 600', { priority: 900 }, 'workflow.trigger: flowControl.priority must be between -600 and 600 seconds (got 900)'],
      ['a constant priority written as an expression', { priority: '-601' }, 'workflow.trigger: flowControl.priority must be between -600 and 600 seconds (got -601)'],
      ['a priority that does not compile', { priority: 'payload.vip ?' }, 'workflow.trigger: flowControl.priority is not a valid expression'],
      ['an unknown field', { concurrency: [{ limit: 1 }], rate: 5 }, 'workflow.trigger: flowControl.rate is not a known field (allowed: concurrency, throttle, debounce, priority)'],
      ['an unknown field of an entry', { concurrency: [{ limit: 1, keys: 'x' }] }, 'workflow.trigger: flowControl.concurrency[0].keys is not a known field (allowed: limit, key)'],
      ['flowControl that is no object', 'fast', 'workflow.trigger: flowControl must be an object'],
    ])('when it has %s', (_case, flowControl, message) => {
      expect(refusal(validateDefinition('AUTOMATION', workflowWithFlowControl(flowControl)))).toMatch(new RegExp(`^Invalid definition: ${escape(message)}`));
    });

    it('when a chatbot flow trigger is wrong, then the message names flow.trigger', () => {
      expect(refusal(validateDefinition('CHATBOT', flowWithFlowControl({ concurrency: [{ limit: 0 }] })))).toBe(
        'Invalid definition: flow.trigger: flowControl.concurrency[0].limit must be between 1 and 100000 (got 0)',
      );
    });

    it('when an error is reported, then it points at the field', () => {
      const result = validateDefinition('AUTOMATION', workflowWithFlowControl({ throttle: { limit: 0, periodSeconds: 1 } }));

      expect(result.ok ? [] : result.errors).toEqual([
        { path: '/workflow/trigger/flowControl/throttle/limit', graph: 'workflow', message: 'workflow.trigger: flowControl.throttle.limit must be between 1 and 100000 (got 0)' },
      ]);
    });
  });
});

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
