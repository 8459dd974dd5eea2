import {
  DEFINITION_LIMITS,
  renderTemplate,
  evaluate,
  validateDefinition,
  type DefinitionError,
  type DefinitionValidation,
  type ProjectType,
} from '@runline/engine';

// The documented example definition of each project type, as a client would send them.
const chatbotExample = () => ({
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
});

const automationExample = () => ({
  schemaVersion: 1,
  workflow: {
    trigger: {
      externalEnabled: true,
      key: 'external_event',
      expectedPayload: { orderId: '', amount: 0 },
      enrollmentPolicy: 'EVERY_MATCH',
      onErrorPolicy: 'ABORT',
      callback: { url: 'https://hooks.example.com/runline', secret: 's3cret' },
      retry: { maxAttempts: 3, backoffSeconds: 1 },
    },
    start: 'n1',
    nodes: { n1: { type: 'return', value: "{ 'ok': true, 'orderId': payload.orderId }" } },
  },
});

/** An automation whose workflow holds `nodes`, starting at the first one. */
const workflowWith = (nodes: Record<string, unknown>, trigger?: Record<string, unknown>) => ({
  schemaVersion: 1,
  workflow: { ...(trigger === undefined ? {} : { trigger }), start: Object.keys(nodes)[0], nodes },
});

function expectInvalid(result: DefinitionValidation): { errors: readonly DefinitionError[]; summary: string } {
  if (result.ok) throw new Error('expected the definition to be refused, but it validated');
  return result;
}

/** Asserts exactly one error and returns it. */
function onlyError(projectType: ProjectType, document: unknown): DefinitionError {
  const { errors } = expectInvalid(validateDefinition(projectType, document));
  expect(errors).toHaveLength(1);
  return errors[0]!;
}

describe('validateDefinition', () => {
  describe('given the documented examples', () => {
    it('when a chatbot saves the chatbot example, then it validates and compiles both graphs', async () => {
      const result = validateDefinition('CHATBOT', chatbotExample());

      if (!result.ok) throw new Error(result.summary);
      expect(result.definition).toEqual(chatbotExample());
      expect(result.compiled.projectType).toBe('CHATBOT');
      expect([...(result.compiled.graphs.bot?.nodes.keys() ?? [])]).toEqual(['hello', 'end']);
      const n1 = result.compiled.graphs.flow?.nodes.get('n1');
      if (n1?.type !== 'message') throw new Error('n1 should be a message node');
      await expect(renderTemplate(n1.text, { payload: { orderId: 42 } })).resolves.toBe('Order 42');
    });

    it('when an automation saves the automation example, then it validates and its value evaluates', async () => {
      const result = validateDefinition('AUTOMATION', automationExample());

      if (!result.ok) throw new Error(result.summary);
      const graph = result.compiled.graphs.workflow;
      expect(graph?.trigger).toMatchObject({
        externalEnabled: true,
        key: 'external_event',
        expectedKeys: ['orderId', 'amount'],
        enrollmentPolicy: 'EVERY_MATCH',
        onErrorPolicy: 'ABORT',
        retry: { maxAttempts: 3, backoffSeconds: 1 },
      });
      const n1 = graph?.nodes.get('n1');
      if (n1?.type !== 'return') throw new Error('n1 should be a return node');
      await expect(evaluate(n1.value, { payload: { orderId: 'A-1' } })).resolves.toEqual({ ok: true, orderId: 'A-1' });
    });

    it('when every node type is used where it is allowed, then the definition validates', () => {
      const document = {
        schemaVersion: 1,
        bot: {
          start: 'ask',
          nodes: {
            ask: { type: 'ask', text: 'Your order number?', saveAs: 'orderId', next: 'branch' },
            branch: {
              type: 'branch',
              cases: [{ if: "vars.orderId = ''", next: 'ask' }],
              else: 'lookup',
            },
            lookup: {
              type: 'http',
              method: 'GET',
              url: 'https://api.example.com/orders/{{ vars.orderId }}',
              headers: { Accept: 'application/json', 'X-Session': '{{ session.id }}' },
              saveAs: 'order',
              next: 'remember',
            },
            remember: { type: 'set', values: { total: 'vars.order.total * 1.2' }, next: 'notify' },
            notify: { type: 'action', name: 'crm.note', params: { text: "'total ' & vars.total" }, next: 'pause' },
            pause: { type: 'wait', seconds: 1.5, next: 'later' },
            later: { type: 'wait', until: '$now()', next: 'approve' },
            approve: { type: 'approval', title: 'Refund {{ vars.total }}?', next: 'done', onReject: 'refused' },
            refused: { type: 'fail', error: 'Refund of {{ vars.total }} refused' },
            done: { type: 'return', value: 'vars.total' },
            end: { type: 'end' },
          },
        },
      };

      const result = validateDefinition('CHATBOT', document);

      expect(result.ok ? [] : result.errors).toEqual([]);
    });
  });

  describe('given a reference to a node that does not exist', () => {
    it('when a node names a missing next, then the error names the node, the field and the target', () => {
      const document = workflowWith({
        n1: { type: 'message', text: 'hi', next: 'n2' },
        n2: { type: 'message', text: 'bye', next: 'n9' },
      });

      const result = expectInvalid(validateDefinition('AUTOMATION', document));

      expect(result.errors).toEqual([
        { path: '/workflow/nodes/n2/next', graph: 'workflow', node: 'n2', message: 'node "n2": next "n9" does not exist' },
      ]);
      expect(result.summary).toBe('Invalid definition: node "n2": next "n9" does not exist');
    });

    it.each([
      ['else', { type: 'branch', cases: [{ if: 'true', next: 'end' }], else: 'gone' }, '/else', 'else "gone"'],
      ['cases[].next', { type: 'branch', cases: [{ if: 'true', next: 'end' }, { if: 'false', next: 'gone' }], else: 'end' }, '/cases/1/next', 'cases[1].next "gone"'],
      ['onReject', { type: 'approval', title: 'ok?', next: 'end', onReject: 'gone' }, '/onReject', 'onReject "gone"'],
    ])('when %s is dangling, then the error names the node and the field', (_field, node, path, text) => {
      const error = onlyError('AUTOMATION', workflowWith({ n1: node, end: { type: 'end' } }));

      expect(error).toEqual({
        path: `/workflow/nodes/n1${path}`,
        graph: 'workflow',
        node: 'n1',
        message: `node "n1": ${text} does not exist`,
      });
    });

    it('when next names an inherited property such as "constructor" or "__proto__", then it does not exist', () => {
      const { errors } = expectInvalid(
        validateDefinition(
          'AUTOMATION',
          workflowWith({
            n1: { type: 'message', text: 'a', next: 'constructor' },
            n2: { type: 'message', text: 'b', next: '__proto__' },
          }),
        ),
      );

      expect(errors.map((error) => error.message)).toEqual([
        'node "n1": next "constructor" does not exist',
        'node "n2": next "__proto__" does not exist',
      ]);
    });

    it('when a parsed body uses "__proto__" as a node id, then the id is refused', () => {
      const document: unknown = JSON.parse(
        '{"schemaVersion":1,"workflow":{"start":"a","nodes":{"a":{"type":"end"},"__proto__":{"type":"end"}}}}',
      );

      expect(onlyError('AUTOMATION', document)).toMatchObject({
        path: '/workflow/nodes/__proto__',
        node: '__proto__',
        message: 'node "__proto__": node id must not be "__proto__"',
      });
    });

    it('when start names a missing node, then the error names the graph', () => {
      const document = { schemaVersion: 1, workflow: { start: 'nope', nodes: { n1: { type: 'end' } } } };

      expect(onlyError('AUTOMATION', document)).toEqual({
        path: '/workflow/start',
        graph: 'workflow',
        message: 'workflow graph: start node "nope" does not exist',
      });
    });

    it('when a flow node points at a bot node, then it does not exist (graphs do not share nodes)', () => {
      const document = chatbotExample();
      document.flow.nodes.n1.next = 'hello';

      expect(onlyError('CHATBOT', document)).toMatchObject({
        path: '/flow/nodes/n1/next',
        graph: 'flow',
        message: 'node "n1": next "hello" does not exist',
      });
    });
  });

  describe('given node types and their placement', () => {
    it('when a node has an unknown type, then the error names the node and the type', () => {
      const error = onlyError('AUTOMATION', workflowWith({ n1: { type: 'teleport', next: 'n1' } }));

      expect(error.node).toBe('n1');
      expect(error.path).toBe('/workflow/nodes/n1/type');
      expect(error.message).toMatch(/^node "n1": unknown node type "teleport" \(expected one of message, action, .*end\)$/);
    });

    it('when a node has no type, then the error says type is required', () => {
      const error = onlyError('AUTOMATION', workflowWith({ n1: { next: 'n1' } }));

      expect(error.message).toMatch(/^node "n1": type is required/);
    });

    it('when a node has a misspelt field, then the error names the field and the fields allowed', () => {
      const error = onlyError('AUTOMATION', workflowWith({ n1: { type: 'message', text: 'hi', next: 'n1', nxt: 'n1' } }));

      expect(error).toEqual({
        path: '/workflow/nodes/n1/nxt',
        graph: 'workflow',
        node: 'n1',
        message: 'node "n1": unknown field "nxt" (a message node has text, next)',
      });
    });

    it('when a required field is missing, then the error names the node and the field', () => {
      const error = onlyError('AUTOMATION', workflowWith({ n1: { type: 'message', text: 'hi' } }));

      expect(error).toMatchObject({ path: '/workflow/nodes/n1/next', message: 'node "n1": next is required' });
    });

    it.each([['flow' as const], ['workflow' as const]])('when an ask node is in the %s graph, then it is refused', (graph) => {
      const ask = { type: 'ask', text: 'Name?', saveAs: 'name', next: 'n2' };
      const document =
        graph === 'flow'
          ? { ...chatbotExample(), flow: { start: 'q', nodes: { q: ask, n2: { type: 'end' } } } }
          : workflowWith({ q: ask, n2: { type: 'end' } });

      const error = onlyError(graph === 'flow' ? 'CHATBOT' : 'AUTOMATION', document);

      expect(error).toEqual({
        path: `/${graph}/nodes/q`,
        graph,
        node: 'q',
        message: `node "q": ask nodes are only allowed in the bot graph, not in "${graph}"`,
      });
    });

    it('when an http node uses a lower-case method, then the error lists the methods', () => {
      const error = onlyError('AUTOMATION', workflowWith({ h: { type: 'http', method: 'get', url: 'https://x.example', next: 'h' } }));

      expect(error.message).toBe('node "h": method must be one of GET, POST, PUT, PATCH, DELETE (got "get")');
    });

    it('when an http node has a static URL that is not http(s), then it is refused', () => {
      const error = onlyError('AUTOMATION', workflowWith({ h: { type: 'http', method: 'GET', url: 'ftp://x.example/a', next: 'h' } }));

      expect(error.message).toBe('node "h": url is not an absolute http or https URL');
    });

    it('when an http node has an invalid header name, then the error names the header', () => {
      const error = onlyError(
        'AUTOMATION',
        workflowWith({ h: { type: 'http', method: 'GET', url: 'https://x.example', headers: { 'Bad Header': 'x' }, next: 'h' } }),
      );

      expect(error).toMatchObject({
        path: '/workflow/nodes/h/headers/Bad Header',
        message: 'node "h": headers has an invalid name "Bad Header": must be a valid HTTP header name',
      });
    });

    it('when saveAs is not a variable name, then it is refused naming the node', () => {
      const error = onlyError('CHATBOT', {
        schemaVersion: 1,
        bot: { start: 'q', nodes: { q: { type: 'ask', text: 'Name?', saveAs: '1st-name', next: 'q' } } },
      });

      expect(error.message).toBe('node "q": saveAs must be a name of letters, digits and "_", not starting with a digit');
    });
  });

  describe('given wait nodes', () => {
    it.each([
      ['neither seconds nor until', { type: 'wait', next: 'w' }, 'node "w": a wait node needs exactly one of seconds or until'],
      ['both seconds and until', { type: 'wait', seconds: 5, until: '$now()', next: 'w' }, 'node "w": a wait node needs exactly one of seconds or until, not both'],
      ['seconds of zero', { type: 'wait', seconds: 0, next: 'w' }, 'node "w": seconds must be > 0'],
      ['seconds as a string', { type: 'wait', seconds: '5', next: 'w' }, 'node "w": seconds must be a number'],
      ['an until that does not compile', { type: 'wait', until: '$now(', next: 'w' }, 'node "w": until is not a valid expression: Expected ")" before end of expression (at position 5)'],
    ])('when a wait has %s, then it is refused naming the node', (_case, node, message) => {
      expect(onlyError('AUTOMATION', workflowWith({ w: node })).message).toBe(message);
    });
  });

  describe('given expressions and templates that do not compile', () => {
    it('when a return value is not an expression, then the error quotes jsonata and names the node and field', () => {
      const error = onlyError('AUTOMATION', workflowWith({ n1: { type: 'return', value: 'payload.' } }));

      expect(error).toEqual({
        path: '/workflow/nodes/n1/value',
        graph: 'workflow',
        node: 'n1',
        message: 'node "n1": value is not a valid expression: Unexpected end of expression (at position 8)',
      });
    });

    it.each([
      ['values.*', { type: 'set', values: { ok: '1', total: 'vars.a +' }, next: 'end' }, '/values/total', 'values.total is not a valid expression'],
      ['params.*', { type: 'action', name: 'x', params: { id: '(' }, next: 'end' }, '/params/id', 'params.id is not a valid expression'],
      ['cases[].if', { type: 'branch', cases: [{ if: 'a = ', next: 'end' }], else: 'end' }, '/cases/0/if', 'cases[0].if is not a valid expression'],
      ['http body', { type: 'http', method: 'POST', url: 'https://x.example', body: '{ "a": }', next: 'end' }, '/body', 'body is not a valid expression'],
      ['message text', { type: 'message', text: 'Hello {{ input.name', next: 'end' }, '/text', 'text is not a valid template: unterminated "{{" at position 6'],
      ['approval title', { type: 'approval', title: 'Pay {{ }}?', next: 'end' }, '/title', 'title is not a valid template: empty "{{ }}" at position 4'],
      ['fail error', { type: 'fail', error: 'Failed: {{ $x( }}' }, '/error', 'error is not a valid template: {{ $x( }} is not a valid expression'],
      ['http url', { type: 'http', method: 'GET', url: 'https://x.example/{{ vars.id + }}', next: 'end' }, '/url', 'url is not a valid template: {{ vars.id + }} is not a valid expression'],
      ['header value', { type: 'http', method: 'GET', url: 'https://x.example', headers: { 'X-Id': '{{ ) }}' }, next: 'end' }, '/headers/X-Id', 'headers.X-Id is not a valid template'],
    ])('when %s does not compile, then the error names the node and the field', (_field, node, path, text) => {
      const error = onlyError('AUTOMATION', workflowWith({ n1: node, end: { type: 'end' } }));

      expect(error.path).toBe(`/workflow/nodes/n1${path}`);
      expect(error.node).toBe('n1');
      expect(error.message.startsWith(`node "n1": ${text}`)).toBe(true);
    });

    it('when the trigger enrollmentKey does not compile, then the error names the trigger', () => {
      const error = onlyError('AUTOMATION', workflowWith({ n1: { type: 'end' } }, { enrollmentKey: 'payload.(' }));

      expect(error).toMatchObject({ path: '/workflow/trigger/enrollmentKey', graph: 'workflow' });
      expect(error.node).toBeUndefined();
      expect(error.message).toMatch(/^workflow trigger: enrollmentKey is not a valid expression: /);
    });

    it('when a template uses braces and quotes inside its expression, then it compiles', () => {
      const document = workflowWith({
        n1: { type: 'message', text: "A {{ {'b': 1}.b }} and {{ '}}' }} and {{ \"{{\" }}", next: 'n2' },
        n2: { type: 'end' },
      });

      expect(validateDefinition('AUTOMATION', document).ok).toBe(true);
    });
  });

  describe('given triggers', () => {
    it.each([
      ['an http callback URL', { callback: { url: 'http://hooks.example.com' } }, 'workflow trigger: callback.url must be an https:// URL'],
      ['an unparseable callback URL', { callback: { url: 'https://' } }, 'workflow trigger: callback.url is not a valid https URL'],
      ['too many retry attempts', { retry: { maxAttempts: 11, backoffSeconds: 1 } }, 'workflow trigger: retry.maxAttempts must be <= 10'],
      ['zero retry attempts', { retry: { maxAttempts: 0, backoffSeconds: 1 } }, 'workflow trigger: retry.maxAttempts must be >= 1'],
      ['fractional retry attempts', { retry: { maxAttempts: 2.5, backoffSeconds: 1 } }, 'workflow trigger: retry.maxAttempts must be an integer'],
      ['a negative backoff', { retry: { maxAttempts: 2, backoffSeconds: -1 } }, 'workflow trigger: retry.backoffSeconds must be >= 0'],
      ['an unknown policy', { enrollmentPolicy: 'SOMETIMES' }, 'workflow trigger: enrollmentPolicy must be one of ONE_TIME, EVERY_MATCH (got "SOMETIMES")'],
      ['an unknown on-error policy', { onErrorPolicy: 'IGNORE' }, 'workflow trigger: onErrorPolicy must be one of ABORT, CONTINUE (got "IGNORE")'],
      ['a non-boolean externalEnabled', { externalEnabled: 'yes' }, 'workflow trigger: externalEnabled must be a boolean'],
      ['an expectedPayload that is not an object', { expectedPayload: ['orderId'] }, 'workflow trigger: expectedPayload must be an object'],
    ])('when it has %s, then it is refused naming the trigger field', (_case, trigger, message) => {
      expect(onlyError('AUTOMATION', workflowWith({ n1: { type: 'end' } }, trigger)).message).toBe(message);
    });

    it('when a bot graph has a trigger, then the field is unknown there', () => {
      const document = chatbotExample();

      const error = onlyError('CHATBOT', { ...document, bot: { ...document.bot, trigger: {} } });

      expect(error).toMatchObject({ path: '/bot/trigger', message: 'bot graph: unknown field "trigger"' });
    });
  });

  describe('given the graphs a project type allows', () => {
    it('when a chatbot definition has no bot graph, then it is refused', () => {
      const { flow } = chatbotExample();

      expect(onlyError('CHATBOT', { schemaVersion: 1, flow })).toEqual({
        path: '/bot',
        graph: 'bot',
        message: 'a CHATBOT definition needs a "bot" graph',
      });
    });

    it('when a chatbot definition has no flow, then it validates (flow is optional)', () => {
      const { bot } = chatbotExample();

      expect(validateDefinition('CHATBOT', { schemaVersion: 1, bot }).ok).toBe(true);
    });

    it('when an automation project saves a chatbot definition, then both mismatches are reported', () => {
      const { errors } = expectInvalid(validateDefinition('AUTOMATION', chatbotExample()));

      expect(errors.map((error) => error.message)).toEqual([
        'an AUTOMATION definition needs a "workflow" graph',
        'an AUTOMATION definition cannot have a "bot" graph (it has "workflow")',
        'an AUTOMATION definition cannot have a "flow" graph (it has "workflow")',
      ]);
    });

    it('when a chatbot project saves an automation definition, then it is refused', () => {
      const { errors } = expectInvalid(validateDefinition('CHATBOT', automationExample()));

      expect(errors.map((error) => error.message)).toEqual([
        'a CHATBOT definition needs a "bot" graph',
        'a CHATBOT definition cannot have a "workflow" graph (it has "bot" and "flow")',
      ]);
    });
  });

  describe('given the document envelope', () => {
    it.each([
      ['null', null],
      ['an array', [automationExample()]],
      ['a string', '{"schemaVersion":1}'],
    ])('when the document is %s, then it must be a JSON object', (_case, document) => {
      expect(onlyError('AUTOMATION', document)).toEqual({ path: '', message: 'the definition must be a JSON object' });
    });

    it('when schemaVersion is missing, then it is required', () => {
      const { workflow } = automationExample();

      expect(onlyError('AUTOMATION', { workflow }).message).toBe('schemaVersion is required (the current version is 1)');
    });

    it('when schemaVersion is 2, then only that is reported', () => {
      const error = onlyError('AUTOMATION', { schemaVersion: 2, workflow: { start: 'x', nodes: {} } });

      expect(error).toEqual({ path: '/schemaVersion', message: 'schemaVersion 2 is not supported (use 1)' });
    });

    it('when the document has an unknown top-level field, then it is named', () => {
      expect(onlyError('AUTOMATION', { ...automationExample(), flows: {} }).message).toBe('unknown field "flows"');
    });

    it('when the document holds a value JSON cannot carry, then it is refused', () => {
      const document = workflowWith({ n1: { type: 'wait', seconds: Number.POSITIVE_INFINITY, next: 'n1' } });

      expect(onlyError('AUTOMATION', document)).toEqual({
        path: '/workflow/nodes/n1/seconds',
        graph: 'workflow',
        node: 'n1',
        message: 'node "n1": seconds is not a JSON value (Infinity)',
      });
    });

    it('when a project type is not one with definitions, then it is refused', () => {
      const result = validateDefinition('ASSISTANT' as ProjectType, automationExample());

      expect(expectInvalid(result).summary).toBe('Invalid definition: project type "ASSISTANT" has no definition');
    });

    it('when there are several problems, then all are listed and the summary counts the others', () => {
      const document = workflowWith({
        n1: { type: 'message', text: 'a', next: 'x1' },
        n2: { type: 'message', text: 'b', next: 'x2' },
        n3: { type: 'return', value: '(' },
      });

      const result = expectInvalid(validateDefinition('AUTOMATION', document));

      expect(result.errors.map((error) => error.node)).toEqual(['n1', 'n2', 'n3']);
      expect(result.summary).toBe('Invalid definition: node "n1": next "x1" does not exist (and 2 more problems)');
    });
  });

  describe('given the limits', () => {
    const chain = (count: number, text = 'x') =>
      Object.fromEntries(
        Array.from({ length: count }, (_, index) => [
          `n${index}`,
          index === count - 1 ? { type: 'end' } : { type: 'message', text, next: `n${index + 1}` },
        ]),
      );

    it(`when a graph has ${DEFINITION_LIMITS.maxNodesPerGraph} nodes, then it validates`, () => {
      expect(validateDefinition('AUTOMATION', workflowWith(chain(DEFINITION_LIMITS.maxNodesPerGraph))).ok).toBe(true);
    });

    it(`when a graph has ${DEFINITION_LIMITS.maxNodesPerGraph + 1} nodes, then it is refused`, () => {
      const error = onlyError('AUTOMATION', workflowWith(chain(DEFINITION_LIMITS.maxNodesPerGraph + 1)));

      expect(error).toEqual({
        path: '/workflow/nodes',
        graph: 'workflow',
        message: 'workflow graph: has more than 500 nodes (has 501)',
      });
    });

    it('when a graph has no nodes, then it is refused', () => {
      expect(onlyError('AUTOMATION', { schemaVersion: 1, workflow: { start: 'a', nodes: {} } }).message).toBe(
        'workflow graph: nodes must not be empty',
      );
    });

    it('when a node id is too long or malformed, then the node is named', () => {
      const long = 'n'.repeat(DEFINITION_LIMITS.maxNodeIdLength + 1);
      const { errors } = expectInvalid(
        validateDefinition('AUTOMATION', workflowWith({ ok: { type: 'end' }, [long]: { type: 'end' }, 'has space': { type: 'end' } })),
      );

      expect(errors.map((error) => [error.node, error.message])).toEqual([
        [long, `node "${long}": node id must be at most 64 characters long`],
        ['has space', 'node "has space": node id must be letters, digits, "_" and "-", not starting with "-"'],
      ]);
    });

    it('when an expression is longer than the limit, then it is refused naming the node', () => {
      const value = `1${' + 1'.repeat(DEFINITION_LIMITS.maxSourceLength / 4)}`;

      expect(onlyError('AUTOMATION', workflowWith({ n1: { type: 'return', value } })).message).toBe(
        'node "n1": value must be at most 8192 characters long',
      );
    });

    it('when the document is larger than the limit, then its size is reported', () => {
      const error = onlyError('AUTOMATION', workflowWith(chain(200, 'x'.repeat(1500))));

      expect(error.path).toBe('');
      expect(error.message).toMatch(/^the definition is \d+ bytes; at most 262144 bytes are allowed$/);
    });

    it('when the document nests deeper than the limit, then the deep value is named', () => {
      let deep: Record<string, unknown> = {};
      const expectedPayload = { nested: deep };
      for (let level = 0; level < DEFINITION_LIMITS.maxDepth; level += 1) {
        const next = {};
        deep['a'] = next;
        deep = next;
      }

      const error = onlyError('AUTOMATION', workflowWith({ n1: { type: 'end' } }, { expectedPayload }));

      expect(error.graph).toBe('workflow');
      expect(error.message).toMatch(/^workflow trigger: expectedPayload\.nested(\.a)+ is nested more than 32 levels deep$/);
    });

    it('when a branch has too many cases, then it is refused', () => {
      const cases = Array.from({ length: DEFINITION_LIMITS.maxBranchCases + 1 }, () => ({ if: 'true', next: 'b' }));

      expect(onlyError('AUTOMATION', workflowWith({ b: { type: 'branch', cases, else: 'b' } })).message).toBe(
        'node "b": cases has more than 50 entries (has 51)',
      );
    });

    it('when there are more problems than are reported, then the summary still counts them all', () => {
      const nodes = Object.fromEntries(
        Array.from({ length: 120 }, (_, index) => [`n${index}`, { type: 'message', text: 'x', next: 'missing' }]),
      );

      const result = expectInvalid(validateDefinition('AUTOMATION', workflowWith(nodes)));

      expect(result.errors).toHaveLength(DEFINITION_LIMITS.maxReportedErrors);
      expect(result.summary).toBe('Invalid definition: node "n0": next "missing" does not exist (and 119 more problems)');
    });
  });
});
