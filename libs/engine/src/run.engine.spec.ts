import {
  ENGINE_RUNTIME,
  RunRequestError,
  compileDefinition,
  runGraph,
  shapeRunResult,
  type Definition,
  type HttpCall,
  type RunOutcome,
} from '@runline/engine';

import { FakeClock, ScriptedHttp, T0, compiledGraph, fakePorts, reply } from '../test/fake-ports.js';
import { PORT_TIMEOUT_GRACE_MS } from './http-node.executor.js';

const chatbotExample: Definition = {
  schemaVersion: 1,
  bot: {
    start: 'hello',
    nodes: { hello: { type: 'message', text: 'Hi {{ input.userName }}', next: 'end' }, end: { type: 'end' } },
  },
  flow: {
    trigger: { externalEnabled: true, key: 'external_event' },
    start: 'n1',
    nodes: { n1: { type: 'message', text: 'Order {{ payload.orderId }}', next: 'n2' }, n2: { type: 'end' } },
  },
};

const automationExample: Definition = {
  schemaVersion: 1,
  workflow: {
    trigger: { externalEnabled: true, key: 'external_event', expectedPayload: { orderId: '', amount: 0 } },
    start: 'n1',
    nodes: { n1: { type: 'return', value: "{ 'ok': true, 'orderId': payload.orderId }" } },
  },
};

/** The outcome after a JSON round trip: what the invocation service stores. */
function stored(outcome: RunOutcome): unknown {
  return JSON.parse(JSON.stringify(outcome));
}

describe('runGraph', () => {
  describe('given the documented example definitions', () => {
    it('when the chatbot flow runs with orderId 42, then it says "Order 42" and succeeds', async () => {
      const outcome = await runGraph(compileDefinition(chatbotExample), { graph: 'flow', scope: { payload: { orderId: 42 } } }, fakePorts());

      expect(outcome.status).toBe('SUCCEEDED');
      expect(outcome.messages).toEqual(['Order 42']);
      expect(shapeRunResult('flow', outcome)).toEqual({ messages: ['Order 42'], actions: [] });
      expect(outcome.steps.map((step) => [step.nodeId, step.type, step.status])).toEqual([
        ['n1', 'message', 'SUCCEEDED'],
        ['n2', 'end', 'SUCCEEDED'],
      ]);
    });

    it('when a port listens to steps, then it hears each step as it is recorded, with the messages its node said', async () => {
      const heard: Array<[string, string[]]> = [];
      const ports = { ...fakePorts(), onStep: (step: { nodeId: string }, messages: readonly string[]) => heard.push([step.nodeId, [...messages]]) };
      const outcome = await runGraph(compileDefinition(chatbotExample), { graph: 'flow', scope: { payload: { orderId: 42 } } }, ports);

      expect(heard).toEqual([
        ['n1', ['Order 42']],
        ['n2', []],
      ]);
      expect(outcome.steps.map((step) => step.nodeId)).toEqual(['n1', 'n2']);
    });

    it('when the bot runs, then it greets the user by name', async () => {
      const outcome = await runGraph(
        compileDefinition(chatbotExample),
        { graph: 'bot', scope: { input: { message: 'hi', userName: 'Ada' } } },
        fakePorts(),
      );

      expect(shapeRunResult('bot', outcome)).toEqual({
        messages: ['Hi Ada'],
        actions: [],
        raw: { status: 'SUCCEEDED', result: null, waitingForInput: false },
      });
    });

    it('when the automation runs, then its result is { ok: true, orderId }', async () => {
      const outcome = await runGraph(
        compileDefinition(automationExample),
        { graph: 'workflow', scope: { payload: { orderId: 'A-7', amount: 3 } } },
        fakePorts(),
      );

      expect(outcome.status).toBe('SUCCEEDED');
      expect(outcome.result).toEqual({ ok: true, orderId: 'A-7' });
      expect(shapeRunResult('workflow', outcome)).toEqual({ ok: true, orderId: 'A-7' });
      expect(outcome.errorMessage).toBeNull();
    });

    it('when a graph the definition lacks is asked for, then the request is refused', async () => {
      await expect(runGraph(compileDefinition(automationExample), { graph: 'bot', scope: {} }, fakePorts())).rejects.toThrow(
        new RunRequestError('the definition has no "bot" graph'),
      );
    });

    it('when the starting vars have no JSON form, then the request is refused', async () => {
      const vars = { big: 10n };

      await expect(runGraph(compileDefinition(automationExample), { graph: 'workflow', scope: { vars } }, fakePorts())).rejects.toThrow(
        RunRequestError,
      );
    });
  });

  describe('given message, action and set nodes', () => {
    const compiled = compiledGraph({
      greet: { type: 'message', text: 'Hello {{ payload.name }}, you owe {{ payload.amount * 2 }}', next: 'tag' },
      tag: {
        type: 'action',
        name: 'crm.tag',
        params: { customer: 'payload.name', tags: "['vip', 'new']", missing: 'payload.nothing' },
        next: 'calc',
      },
      calc: {
        type: 'set',
        values: { total: 'payload.amount * 2', seenTotal: 'vars.total', dropped: 'payload.nothing' },
        next: 'done',
      },
      done: { type: 'return', value: 'vars' },
    });

    it('when run, then messages, actions and vars are produced in order', async () => {
      const outcome = await runGraph(
        compiled,
        { graph: 'workflow', scope: { payload: { name: 'Ada', amount: 21 }, vars: { total: 1, dropped: 'old' } } },
        fakePorts(),
      );

      expect(outcome.messages).toEqual(['Hello Ada, you owe 42']);
      // A parameter that selects nothing is left out.
      expect(outcome.actions).toEqual([{ name: 'crm.tag', params: { customer: 'Ada', tags: ['vip', 'new'] } }]);
      // The values of one set node see the vars from before it; a value of nothing unsets.
      expect(outcome.vars).toEqual({ total: 42, seenTotal: 1 });
      expect(outcome.result).toEqual({ total: 42, seenTotal: 1 });
    });

    it('when run with caller vars, then the caller objects are left untouched', async () => {
      const vars = { total: 1, dropped: 'old' };

      await runGraph(compiled, { graph: 'workflow', scope: { payload: { name: 'Ada', amount: 21 }, vars } }, fakePorts());

      expect(vars).toEqual({ total: 1, dropped: 'old' });
    });
  });

  describe('given a branch node', () => {
    const compiled = compiledGraph({
      pick: {
        type: 'branch',
        cases: [
          { if: 'payload.amount > 100', next: 'big' },
          { if: 'payload.amount > 10', next: 'medium' },
          { if: 'payload.tags', next: 'tagged' },
        ],
        else: 'small',
      },
      big: { type: 'return', value: "'big'" },
      medium: { type: 'return', value: "'medium'" },
      tagged: { type: 'return', value: "'tagged'" },
      small: { type: 'return', value: "'small'" },
    });

    it.each([
      [{ amount: 500 }, 'big'],
      [{ amount: 500, tags: ['x'] }, 'big'],
      [{ amount: 50 }, 'medium'],
      [{ amount: 5, tags: ['x'] }, 'tagged'],
      [{ amount: 5, tags: [] }, 'small'],
      [{ amount: 5 }, 'small'],
    ])('when the payload is %j, then the first truthy case wins: %s', async (payload, expected) => {
      const outcome = await runGraph(compiled, { graph: 'workflow', scope: { payload } }, fakePorts());

      expect(outcome.result).toBe(expected);
      expect(outcome.steps.map((step) => step.nodeId)).toEqual(['pick', expected]);
    });
  });

  describe('given an http node', () => {
    const compiled = compiledGraph({
      call: {
        type: 'http',
        method: 'POST',
        url: 'https://api.example.com/orders/{{ payload.orderId }}',
        headers: { Authorization: 'Bearer {{ payload.token }}' },
        body: "{ 'total': payload.amount * 2 }",
        saveAs: 'order',
        next: 'done',
      },
      done: { type: 'return', value: 'vars.order.body.state' },
    });
    const scope = { payload: { orderId: 42, token: 't0k', amount: 10 } };

    it('when the call answers 200, then url, headers and JSON body go out and the reply is saved', async () => {
      const clock = new FakeClock();
      const http = new ScriptedHttp(() => {
        clock.advance(250);
        return reply(200, { state: 'paid' }, { 'x-request-id': 'r1' });
      });

      const outcome = await runGraph(compiled, { graph: 'workflow', scope, limits: { timeoutMs: 5000 } }, fakePorts(clock, http));

      expect(outcome.status).toBe('SUCCEEDED');
      expect(outcome.result).toBe('paid');
      expect(http.calls).toHaveLength(1);
      expect(http.calls[0]).toMatchObject({
        method: 'POST',
        url: 'https://api.example.com/orders/42',
        headers: { Authorization: 'Bearer t0k', 'content-type': 'application/json' },
        body: '{"total":20}',
        // What is left of the run, plus the grace that lets the run's deadline decide.
        timeoutMs: 5000 + PORT_TIMEOUT_GRACE_MS,
      });
      expect(outcome.vars.order).toEqual({
        status: 200,
        headers: { 'content-type': 'application/json', 'x-request-id': 'r1' },
        body: { state: 'paid' },
      });
      expect(outcome.steps[0]).toMatchObject({ nodeId: 'call', type: 'http', status: 'SUCCEEDED', durationMs: 250 });
    });

    it('when an earlier step used up time, then the call gets only the time that is left', async () => {
      const clock = new FakeClock();
      const http = new ScriptedHttp();
      const slow = compiledGraph({
        first: {
          type: 'http',
          method: 'GET',
          url: 'https://api.example.com/a',
          next: 'second',
        },
        second: { type: 'http', method: 'GET', url: 'https://api.example.com/b', next: 'end' },
        end: { type: 'end' },
      });
      const stepping = new ScriptedHttp((call) => {
        clock.advance(1200);
        return http.http(call);
      });

      await runGraph(slow, { graph: 'workflow', scope: {}, limits: { timeoutMs: 5000 } }, fakePorts(clock, stepping));

      expect(http.calls.map((call) => [call.url, call.timeoutMs, call.body, call.headers])).toEqual([
        ['https://api.example.com/a', 5000 + PORT_TIMEOUT_GRACE_MS, undefined, {}],
        ['https://api.example.com/b', 3800 + PORT_TIMEOUT_GRACE_MS, undefined, {}],
      ]);
    });

    it('when the call answers 404 under ABORT, then the run fails naming the node and the status', async () => {
      const http = new ScriptedHttp(() => reply(404, { error: 'no such order' }));

      const outcome = await runGraph(compiled, { graph: 'workflow', scope }, fakePorts(new FakeClock(), http));

      expect(outcome.status).toBe('FAILED');
      expect(outcome.errorMessage).toBe('node "call": POST request answered HTTP 404');
      expect(outcome.steps).toEqual([expect.objectContaining({ nodeId: 'call', status: 'FAILED', error: 'POST request answered HTTP 404' })]);
    });

    it('when the call answers 503 under CONTINUE, then the reply is still saved for later nodes', async () => {
      const http = new ScriptedHttp(() => reply(503, { state: 'down' }));

      const outcome = await runGraph(compiled, { graph: 'workflow', scope, onErrorPolicy: 'CONTINUE' }, fakePorts(new FakeClock(), http));

      expect(outcome.status).toBe('SUCCEEDED');
      expect(outcome.result).toBe('down');
      expect(outcome.steps.map((step) => step.status)).toEqual(['FAILED', 'SUCCEEDED']);
    });

    it('when the port rejects (refused address, network error), then the node fails with the reason', async () => {
      const http = new ScriptedHttp(() => Promise.reject(new Error('address 10.0.0.1 is not public')));

      const outcome = await runGraph(compiled, { graph: 'workflow', scope }, fakePorts(new FakeClock(), http));

      expect(outcome.status).toBe('FAILED');
      expect(outcome.errorMessage).toBe('node "call": POST request failed: address 10.0.0.1 is not public');
      expect(outcome.vars).toEqual({});
    });

    it('when the node sets its own content type, then the engine does not add one', async () => {
      const http = new ScriptedHttp();
      const custom = compiledGraph({
        call: {
          type: 'http',
          method: 'PUT',
          url: 'https://api.example.com/x',
          headers: { 'Content-Type': 'application/merge-patch+json' },
          body: "{ 'a': 1 }",
          next: 'end',
        },
        end: { type: 'end' },
      });

      await runGraph(custom, { graph: 'workflow', scope: {} }, fakePorts(new FakeClock(), http));

      expect(http.calls[0]?.headers).toEqual({ 'Content-Type': 'application/merge-patch+json' });
    });
  });

  describe('given fail, return and end nodes', () => {
    it.each([['ABORT' as const], ['CONTINUE' as const]])('when a fail node runs under %s, then the run fails with its rendered error', async (policy) => {
      const compiled = compiledGraph({
        check: { type: 'fail', error: 'Order {{ payload.orderId }} is too small' },
      });

      const outcome = await runGraph(compiled, { graph: 'workflow', scope: { payload: { orderId: 42 } }, onErrorPolicy: policy }, fakePorts());

      expect(outcome.status).toBe('FAILED');
      expect(outcome.errorMessage).toBe('Order 42 is too small');
      expect(outcome.result).toBeNull();
      expect(outcome.steps).toEqual([expect.objectContaining({ nodeId: 'check', type: 'fail', status: 'FAILED', error: 'Order 42 is too small' })]);
    });

    it.each([
      ["'text'", 'text'],
      ['payload.amount * 3', 30],
      ['payload.items[price > 5].name', ['b', 'c']],
      ["{ 'nested': { 'list': [1, 2] } }", { nested: { list: [1, 2] } }],
      ['payload.nothing', null],
      ['$uppercase', null],
      ['function($x) { $x }', null],
    ])('when a return node yields %s, then the result is its JSON value', async (value, expected) => {
      const compiled = compiledGraph({ done: { type: 'return', value } });
      const payload = { amount: 10, items: [{ name: 'a', price: 1 }, { name: 'b', price: 6 }, { name: 'c', price: 9 }] };

      const outcome = await runGraph(compiled, { graph: 'workflow', scope: { payload } }, fakePorts());

      expect(outcome.status).toBe('SUCCEEDED');
      expect(outcome.result).toEqual(expected);
    });

    it('when an end node is reached, then the run succeeds with a null result', async () => {
      const outcome = await runGraph(compiledGraph({ end: { type: 'end' } }), { graph: 'workflow', scope: {} }, fakePorts());

      expect(outcome).toMatchObject({ status: 'SUCCEEDED', result: null, errorMessage: null, suspension: null, pendingApproval: null });
    });
  });

  describe('given a node that fails', () => {
    const compiled = compiledGraph({
      before: { type: 'message', text: 'before', next: 'broken' },
      broken: { type: 'set', values: { ok: '1', sum: "payload.amount + 'x'" }, next: 'after' },
      after: { type: 'message', text: 'after, ok={{ vars.ok }}', next: 'end' },
      end: { type: 'end' },
    });
    const request = { graph: 'workflow' as const, scope: { payload: { amount: 1 } } };

    it('when the policy is ABORT (the default), then the run fails naming the node and later nodes do not run', async () => {
      const outcome = await runGraph(compiled, request, fakePorts());

      expect(outcome.status).toBe('FAILED');
      expect(outcome.errorMessage).toMatch(/^node "broken": expression "payload.amount \+ 'x'" failed: .+/);
      expect(outcome.messages).toEqual(['before']);
      expect(outcome.steps.map((step) => [step.nodeId, step.status])).toEqual([
        ['before', 'SUCCEEDED'],
        ['broken', 'FAILED'],
      ]);
      expect(outcome.steps[1]?.error).toMatch(/^expression "payload.amount \+ 'x'" failed: /);
    });

    it('when the policy is CONTINUE, then the failed step is recorded, nothing of it is applied, and the run goes on', async () => {
      const outcome = await runGraph(compiled, { ...request, onErrorPolicy: 'CONTINUE' }, fakePorts());

      expect(outcome.status).toBe('SUCCEEDED');
      expect(outcome.errorMessage).toBeNull();
      expect(outcome.messages).toEqual(['before', 'after, ok=']);
      expect(outcome.vars).toEqual({});
      expect(outcome.steps.map((step) => [step.nodeId, step.status])).toEqual([
        ['before', 'SUCCEEDED'],
        ['broken', 'FAILED'],
        ['after', 'SUCCEEDED'],
        ['end', 'SUCCEEDED'],
      ]);
    });

    it('when a branch case fails under CONTINUE, then the run goes on at else', async () => {
      const branching = compiledGraph({
        pick: { type: 'branch', cases: [{ if: '$number(payload.x) > 1', next: 'yes' }], else: 'no' },
        yes: { type: 'return', value: "'yes'" },
        no: { type: 'return', value: "'no'" },
      });

      const outcome = await runGraph(branching, { graph: 'workflow', scope: { payload: { x: 'abc' } }, onErrorPolicy: 'CONTINUE' }, fakePorts());

      expect(outcome.result).toBe('no');
      expect(outcome.steps.map((step) => step.status)).toEqual(['FAILED', 'SUCCEEDED']);
    });

    it('when a return value fails under CONTINUE, then there is nowhere to go and the run fails', async () => {
      const returning = compiledGraph({ done: { type: 'return', value: '$number(payload.x)' } });

      const outcome = await runGraph(returning, { graph: 'workflow', scope: { payload: { x: 'abc' } }, onErrorPolicy: 'CONTINUE' }, fakePorts());

      expect(outcome.status).toBe('FAILED');
      expect(outcome.errorMessage).toMatch(/^node "done": expression "\$number\(payload.x\)" failed: /);
    });

    it('when an approval title fails under CONTINUE, then the run fails rather than skip the approval', async () => {
      const approving = compiledGraph({
        ask: { type: 'approval', title: 'Pay {{ $number(payload.x) }}?', next: 'pay' },
        pay: { type: 'action', name: 'pay', next: 'end' },
        end: { type: 'end' },
      });

      const outcome = await runGraph(approving, { graph: 'workflow', scope: { payload: { x: 'abc' } }, onErrorPolicy: 'CONTINUE' }, fakePorts());

      expect(outcome.status).toBe('FAILED');
      expect(outcome.actions).toEqual([]);
      expect(outcome.errorMessage).toMatch(/^node "ask": /);
    });
  });

  describe('given step records and the trace', () => {
    it('when a run finishes, then every executed node has a record with times from the ports clock', async () => {
      const clock = new FakeClock();
      const http = new ScriptedHttp(() => {
        clock.advance(40);
        return reply(200, null);
      });
      const compiled = compiledGraph({
        hello: { type: 'message', text: 'hi', next: 'call' },
        call: { type: 'http', method: 'GET', url: 'https://api.example.com', next: 'end' },
        end: { type: 'end' },
      });

      const outcome = await runGraph(compiled, { graph: 'workflow', scope: {} }, fakePorts(clock, http));

      expect(outcome.steps).toEqual([
        { nodeId: 'hello', type: 'message', status: 'SUCCEEDED', startedAt: '2030-01-01T00:00:00.000Z', completedAt: '2030-01-01T00:00:00.000Z', durationMs: 0 },
        { nodeId: 'call', type: 'http', status: 'SUCCEEDED', startedAt: '2030-01-01T00:00:00.000Z', completedAt: '2030-01-01T00:00:00.040Z', durationMs: 40 },
        { nodeId: 'end', type: 'end', status: 'SUCCEEDED', startedAt: '2030-01-01T00:00:00.040Z', completedAt: '2030-01-01T00:00:00.040Z', durationMs: 0 },
      ]);
      expect(outcome.trace).toEqual({
        runtime: ENGINE_RUNTIME,
        graph: 'workflow',
        startedAt: new Date(T0).toISOString(),
        completedAt: '2030-01-01T00:00:00.040Z',
        durationMs: 40,
        steps: 3,
      });
      expect(ENGINE_RUNTIME).toBe('runline-engine/1');
    });

    it('when any run ends, then its outcome equals its own JSON round trip', async () => {
      const compiled = compiledGraph({
        seq: { type: 'set', values: { list: 'payload.items.name', fn: '$uppercase' }, next: 'act' },
        act: { type: 'action', name: 'a', params: { first: 'payload.items[0]' }, next: 'done' },
        done: { type: 'return', value: 'vars.list' },
      });

      const outcome = await runGraph(compiled, { graph: 'workflow', scope: { payload: { items: [{ name: 'x' }, { name: 'y' }] } } }, fakePorts());

      expect(outcome.status).toBe('SUCCEEDED');
      expect(stored(outcome)).toEqual(outcome);
      expect(outcome.vars).toEqual({ list: ['x', 'y'] });
    });
  });

  describe('given one compiled definition', () => {
    it('when many runs share it concurrently, then each run sees only its own scope and http replies', async () => {
      const compiled = compiledGraph({
        call: { type: 'http', method: 'GET', url: 'https://api.example.com/{{ payload.n }}', saveAs: 'res', next: 'calc' },
        calc: { type: 'set', values: { doubled: 'vars.res.body.n * 2' }, next: 'say' },
        say: { type: 'message', text: 'run {{ payload.n }} -> {{ vars.doubled }}', next: 'done' },
        done: { type: 'return', value: "{ 'n': payload.n, 'doubled': vars.doubled }" },
      });
      // Replies come back in a shuffled order, so runs interleave at every await.
      const http = new ScriptedHttp(async (call: HttpCall) => {
        const n = Number(call.url.split('/').pop());
        for (let turn = 0; turn < (n * 7) % 5; turn += 1) await new Promise((resolve) => setImmediate(resolve));
        return reply(200, { n });
      });
      const ports = fakePorts(new FakeClock(), http);

      const outcomes = await Promise.all(
        Array.from({ length: 40 }, (_, n) => runGraph(compiled, { graph: 'workflow', scope: { payload: { n } } }, ports)),
      );

      outcomes.forEach((outcome, n) => {
        expect(outcome.result).toEqual({ n, doubled: n * 2 });
        expect(outcome.messages).toEqual([`run ${n} -> ${n * 2}`]);
        expect(outcome.vars.doubled).toBe(n * 2);
      });
    });

    it('when it runs, then it evaluates the compiled programs and never compiles the source again', async () => {
      const compiled = compiledGraph({ done: { type: 'return', value: 'payload.n' } });
      const node = compiled.graphs.workflow?.nodes.get('done');
      if (node?.type !== 'return') throw new Error('expected the return node');
      let evaluations = 0;
      // A program whose source is not JSONata at all: recompiling it would throw.
      const program = {
        evaluate: async (input: unknown) => {
          evaluations += 1;
          return { seen: (input as { payload: { n: number } }).payload.n };
        },
      };
      const patched = {
        ...compiled,
        graphs: {
          workflow: {
            ...compiled.graphs.workflow!,
            nodes: new Map([['done', { ...node, value: { kind: 'expression' as const, source: '(((not jsonata', program } }]]),
          },
        },
      };

      const outcomes = await Promise.all([1, 2, 3].map((n) => runGraph(patched, { graph: 'workflow', scope: { payload: { n } } }, fakePorts())));

      expect(outcomes.map((outcome) => outcome.result)).toEqual([{ seen: 1 }, { seen: 2 }, { seen: 3 }]);
      expect(evaluations).toBe(3);
    });
  });
});
