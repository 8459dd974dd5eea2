import {
  InvalidDefinitionError,
  compileDefinition,
  evaluate,
  isSelfContained,
  renderTemplate,
  validateDefinition,
  type CompiledDefinition,
  type CompiledNode,
  type CompiledNodeOf,
  type Definition,
} from '@runline/engine';

const automation: Definition = {
  schemaVersion: 1,
  workflow: {
    trigger: { expectedPayload: { orderId: '', amount: 0 }, enrollmentKey: 'payload.customer.email' },
    start: 'greet',
    nodes: {
      greet: { type: 'message', text: 'Order {{ payload.orderId }}', next: 'total' },
      total: { type: 'set', values: { total: 'payload.amount * 2', label: "'#' & payload.orderId" }, next: 'big' },
      big: {
        type: 'branch',
        cases: [
          { if: 'vars.total > 100', next: 'call' },
          { if: 'vars.total > 10', next: 'done' },
        ],
        else: 'small',
      },
      call: {
        type: 'http',
        method: 'POST',
        url: 'https://api.example.com/orders/{{ payload.orderId }}',
        headers: { 'X-Order': '{{ payload.orderId }}' },
        body: '{ "total": vars.total }',
        saveAs: 'response',
        next: 'done',
      },
      small: { type: 'fail', error: 'Order {{ payload.orderId }} is too small' },
      done: { type: 'return', value: "{ 'orderId': payload.orderId, 'total': vars.total }" },
    },
  },
};

/** The workflow node `id`, which must be of `type`. */
function node<T extends CompiledNode['type']>(compiled: CompiledDefinition, id: string, type: T): CompiledNodeOf<T> {
  const found = compiled.graphs.workflow?.nodes.get(id);
  if (found?.type !== type) throw new Error(`node ${id} is ${found?.type ?? 'missing'}, not ${type}`);
  return found as CompiledNodeOf<T>;
}

describe('compileDefinition', () => {
  describe('given a valid automation', () => {
    const compiled = compileDefinition(automation);

    it('when compiled, then every node is there in document order with its references', () => {
      const graph = compiled.graphs.workflow;

      expect(compiled.projectType).toBe('AUTOMATION');
      expect(graph?.start).toBe('greet');
      expect([...(graph?.nodes.keys() ?? [])]).toEqual(['greet', 'total', 'big', 'call', 'small', 'done']);
      expect(node(compiled, 'big', 'branch').cases.map((branchCase) => branchCase.next)).toEqual(['call', 'done']);
      expect(node(compiled, 'big', 'branch').else).toBe('small');
    });

    it('when the same compiled definition serves two runs, then each run evaluates against its own scope', async () => {
      const greet = node(compiled, 'greet', 'message');
      const values = node(compiled, 'total', 'set').values;

      const first = { payload: { orderId: 42, amount: 70 } };
      const second = { payload: { orderId: 7, amount: 3 } };

      await expect(renderTemplate(greet.text, first)).resolves.toBe('Order 42');
      await expect(renderTemplate(greet.text, second)).resolves.toBe('Order 7');
      await expect(evaluate(values.get('total')!, first)).resolves.toBe(140);
      await expect(evaluate(values.get('label')!, second)).resolves.toBe('#7');
    });

    it('when branch cases are evaluated, then the first truthy case wins as the engine will do', async () => {
      const { cases } = node(compiled, 'big', 'branch');
      const pick = async (total: number) => {
        for (const branchCase of cases) {
          if (await evaluate(branchCase.if, { vars: { total } })) return branchCase.next;
        }
        return 'else';
      };

      await expect(pick(140)).resolves.toBe('call');
      await expect(pick(50)).resolves.toBe('done');
      await expect(pick(5)).resolves.toBe('else');
    });

    it('when the http node is used, then url, headers and body are ready to evaluate', async () => {
      const call = node(compiled, 'call', 'http');
      const scope = { payload: { orderId: 42 }, vars: { total: 140 } };

      expect(call.method).toBe('POST');
      expect(call.saveAs).toBe('response');
      await expect(renderTemplate(call.url, scope)).resolves.toBe('https://api.example.com/orders/42');
      await expect(renderTemplate(call.headers.get('X-Order')!, scope)).resolves.toBe('42');
      await expect(evaluate(call.body!, scope)).resolves.toEqual({ total: 140 });
    });

    it('when the trigger is read, then defaults are applied and its enrollment key is compiled', async () => {
      const trigger = compiled.graphs.workflow?.trigger;

      expect(trigger).toMatchObject({ externalEnabled: true, key: 'external_event', expectedKeys: ['orderId', 'amount'] });
      await expect(
        evaluate(trigger!.enrollmentKeyExpression!, { payload: { customer: { email: 'a@example.com' } } }),
      ).resolves.toBe('a@example.com');
    });

    it('when the compiled objects are read twice, then they are the same objects (compiled once)', () => {
      const again = compiled.graphs.workflow?.nodes.get('greet');

      expect(again).toBe(compiled.graphs.workflow?.nodes.get('greet'));
      expect(node(compiled, 'greet', 'message').text.parts[1]).toBe(node(compiled, 'greet', 'message').text.parts[1]);
    });
  });

  it('given validateDefinition, when it succeeds, then its compiled form matches compileDefinition', () => {
    const result = validateDefinition('AUTOMATION', automation);

    if (!result.ok) throw new Error(result.summary);
    const summary = (compiled: CompiledDefinition) =>
      [...(compiled.graphs.workflow?.nodes.values() ?? [])].map((compiledNode) => compiledNode.type);
    expect(summary(result.compiled)).toEqual(summary(compileDefinition(automation)));
  });

  it('given a flow without a trigger section, when compiled, then it gets the chatbot defaults', () => {
    const compiled = compileDefinition({
      schemaVersion: 1,
      bot: { start: 'a', nodes: { a: { type: 'end' } } },
      flow: { start: 'b', nodes: { b: { type: 'end' } } },
    });

    expect(compiled.projectType).toBe('CHATBOT');
    expect(compiled.graphs.bot?.trigger).toBeUndefined();
    expect(compiled.graphs.flow?.trigger).toEqual({
      externalEnabled: true,
      key: 'external_event',
      expectedKeys: ['event', 'customerId'],
    });
  });

  it('given a definition whose expression does not compile, when compiled, then it throws naming the node', () => {
    const broken: Definition = {
      schemaVersion: 1,
      workflow: { start: 'n1', nodes: { n1: { type: 'return', value: 'payload.' } } },
    };

    expect(() => compileDefinition(broken)).toThrow(InvalidDefinitionError);
    expect(() => compileDefinition(broken)).toThrow(
      'Invalid definition: node "n1": value is not a valid expression: Unexpected end of expression (at position 8)',
    );
  });
});

describe('isSelfContained', () => {
  const withNode = (extra: Record<string, unknown> | null) =>
    compileDefinition({
      schemaVersion: 1,
      workflow: {
        start: 'greet',
        nodes: {
          greet: { type: 'message', text: 'hi', next: extra ? 'extra' : 'note' },
          ...(extra ? { extra: { ...extra, next: 'note' } } : {}),
          note: { type: 'action', name: 'crm.note', params: { text: "'x'" }, next: 'done' },
          done: { type: 'end' },
        },
      },
    } as unknown as Definition).graphs.workflow!;

  it('given only nodes that compute and record, then a run can be recorded once at its end', () => {
    expect(isSelfContained(withNode(null))).toBe(true);
    expect(isSelfContained(withNode({ type: 'set', values: { a: '1' } }))).toBe(true);
  });

  it.each([
    ['an http call', { type: 'http', method: 'GET', url: 'https://api.example.com/x' }],
    ['a wait', { type: 'wait', seconds: 5 }],
    ['an approval', { type: 'approval', title: 'ok?' }],
  ])('given %s, then it is not', (_name, extra) => {
    expect(isSelfContained(withNode(extra))).toBe(false);
  });
  it('given the automation above (it has an http node), then it is not', () => {
    expect(isSelfContained(compileDefinition(automation).graphs.workflow!)).toBe(false);
  });
});
