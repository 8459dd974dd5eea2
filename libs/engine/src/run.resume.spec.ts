import { runGraph, shapeRunResult, type RunOutcome, type RunPorts } from '@runline/engine';

import { FakeClock, compiledGraph, fakePorts } from '../test/fake-ports.js';

/** What the invocation service does with a suspended outcome: store it, read it back. */
function stored(outcome: RunOutcome): RunOutcome {
  return JSON.parse(JSON.stringify(outcome)) as RunOutcome;
}

/** Carries everything over, as an async run resumed by the scheduler or an approval does. */
function carried(outcome: RunOutcome) {
  const { steps, messages, actions } = stored(outcome);
  return { steps, messages, actions };
}

describe('runGraph suspensions and resumes', () => {
  describe('given a wait node of 90 seconds', () => {
    const compiled = compiledGraph({
      hello: { type: 'message', text: 'first', next: 'pause' },
      pause: { type: 'wait', seconds: 90, next: 'bye' },
      bye: { type: 'message', text: 'second, n={{ vars.n }}', next: 'end' },
      end: { type: 'end' },
    });

    it('when run, then it suspends with the time to resume at', async () => {
      const clock = new FakeClock();

      const outcome = await runGraph(compiled, { graph: 'workflow', scope: { vars: { n: 1 } } }, fakePorts(clock));

      expect(outcome.status).toBe('SUSPENDED');
      expect(outcome.suspension).toEqual({ kind: 'wait', nodeId: 'pause', resumeAt: '2030-01-01T00:01:30.000Z' });
      expect(outcome.pendingApproval).toBeNull();
      expect(outcome.errorMessage).toBeNull();
      expect(outcome.messages).toEqual(['first']);
      expect(outcome.steps.map((step) => [step.nodeId, step.status])).toEqual([
        ['hello', 'SUCCEEDED'],
        ['pause', 'SUSPENDED'],
      ]);
    });

    it('when resumed later with the stored outcome, then it continues at next and completes the wait step', async () => {
      const clock = new FakeClock();
      const ports = fakePorts(clock);
      const suspended = stored(await runGraph(compiled, { graph: 'workflow', scope: { vars: { n: 1 } } }, ports));
      clock.advance(90_000);

      const outcome = await runGraph(
        compiled,
        { graph: 'workflow', scope: { vars: suspended.vars }, resume: { kind: 'wait', nodeId: 'pause', ...carried(suspended) } },
        ports,
      );

      expect(outcome.status).toBe('SUCCEEDED');
      expect(outcome.messages).toEqual(['first', 'second, n=1']);
      expect(outcome.steps.map((step) => [step.nodeId, step.status, step.durationMs])).toEqual([
        ['hello', 'SUCCEEDED', 0],
        ['pause', 'SUCCEEDED', 90_000],
        ['bye', 'SUCCEEDED', 0],
        ['end', 'SUCCEEDED', 0],
      ]);
      expect(outcome.suspension).toBeNull();
      expect(outcome.trace.startedAt).toBe('2030-01-01T00:01:30.000Z');
    });
  });

  describe('given a wait node with an until expression', () => {
    const compiled = compiledGraph({
      pause: { type: 'wait', until: 'payload.when', next: 'end' },
      end: { type: 'end' },
    });

    it.each([
      ['2031-06-01T12:00:00+02:00', '2031-06-01T10:00:00.000Z'],
      [Date.parse('2031-01-01T00:00:00Z'), '2031-01-01T00:00:00.000Z'],
    ])('when it yields %j, then the run suspends until %s', async (when, resumeAt) => {
      const outcome = await runGraph(compiled, { graph: 'workflow', scope: { payload: { when } } }, fakePorts());

      expect(outcome.suspension).toEqual({ kind: 'wait', nodeId: 'pause', resumeAt });
    });

    it('when it yields something that is not a time, then the node fails naming the node', async () => {
      const outcome = await runGraph(compiled, { graph: 'workflow', scope: { payload: { when: 'next tuesday' } } }, fakePorts());

      expect(outcome.status).toBe('FAILED');
      expect(outcome.errorMessage).toBe(
        'node "pause": until must yield an ISO 8601 date-time or epoch milliseconds, got "next tuesday"',
      );
    });

    it('when it fails under CONTINUE, then the run goes on without waiting', async () => {
      const outcome = await runGraph(compiled, { graph: 'workflow', scope: { payload: {} }, onErrorPolicy: 'CONTINUE' }, fakePorts());

      expect(outcome.status).toBe('SUCCEEDED');
      expect(outcome.steps.map((step) => step.status)).toEqual(['FAILED', 'SUCCEEDED']);
      expect(outcome.steps[0]?.error).toBe('until must yield an ISO 8601 date-time or epoch milliseconds, got nothing');
    });
  });

  describe('given an approval node', () => {
    const withReject = compiledGraph({
      gate: { type: 'approval', title: 'Refund {{ payload.amount }} EUR?', next: 'pay', onReject: 'refused' },
      pay: { type: 'action', name: 'refund', params: { amount: 'payload.amount' }, next: 'done' },
      refused: { type: 'return', value: "'refused'" },
      done: { type: 'return', value: "'paid'" },
    });
    const withoutReject = compiledGraph({
      gate: { type: 'approval', title: 'Go?', next: 'done' },
      done: { type: 'return', value: "'went'" },
    });
    const scope = { payload: { amount: 30 } };

    async function suspendedAt(ports: RunPorts, compiled = withReject): Promise<RunOutcome> {
      return stored(await runGraph(compiled, { graph: 'workflow', scope }, ports));
    }

    it('when run, then it suspends with the pending approval and its rendered title', async () => {
      const outcome = await suspendedAt(fakePorts());

      expect(outcome.status).toBe('SUSPENDED');
      expect(outcome.pendingApproval).toEqual({ nodeId: 'gate', title: 'Refund 30 EUR?', requestedAt: '2030-01-01T00:00:00.000Z' });
      expect(outcome.suspension).toEqual({ kind: 'approval', nodeId: 'gate', title: 'Refund 30 EUR?', requestedAt: '2030-01-01T00:00:00.000Z' });
      expect(outcome.actions).toEqual([]);
    });

    it('when approved, then it continues at next', async () => {
      const ports = fakePorts();
      const suspended = await suspendedAt(ports);

      const outcome = await runGraph(
        withReject,
        { graph: 'workflow', scope, resume: { kind: 'approval', nodeId: 'gate', decision: 'approve', ...carried(suspended) } },
        ports,
      );

      expect(outcome.status).toBe('SUCCEEDED');
      expect(outcome.result).toBe('paid');
      expect(outcome.actions).toEqual([{ name: 'refund', params: { amount: 30 } }]);
      expect(outcome.pendingApproval).toBeNull();
      expect(outcome.steps.map((step) => [step.nodeId, step.status])).toEqual([
        ['gate', 'SUCCEEDED'],
        ['pay', 'SUCCEEDED'],
        ['done', 'SUCCEEDED'],
      ]);
    });

    it('when rejected and the node has onReject, then it continues there', async () => {
      const ports = fakePorts();
      const suspended = await suspendedAt(ports);

      const outcome = await runGraph(
        withReject,
        { graph: 'workflow', scope, resume: { kind: 'approval', nodeId: 'gate', decision: 'reject', ...carried(suspended) } },
        ports,
      );

      expect(outcome.status).toBe('SUCCEEDED');
      expect(outcome.result).toBe('refused');
      expect(outcome.actions).toEqual([]);
    });

    it('when rejected and the node has no onReject, then the run fails at the node', async () => {
      const ports = fakePorts();
      const suspended = await suspendedAt(ports, withoutReject);

      const outcome = await runGraph(
        withoutReject,
        { graph: 'workflow', scope, resume: { kind: 'approval', nodeId: 'gate', decision: 'reject', ...carried(suspended) } },
        ports,
      );

      expect(outcome.status).toBe('FAILED');
      expect(outcome.errorMessage).toBe('Rejected at node "gate"');
      expect(outcome.result).toBeNull();
      expect(outcome.steps).toEqual([expect.objectContaining({ nodeId: 'gate', status: 'FAILED', error: 'Rejected at node "gate"' })]);
    });

    it('when decided with who, when and a comment, then the approval step carries them', async () => {
      const clock = new FakeClock();
      const ports = fakePorts(clock);
      const suspended = await suspendedAt(ports);
      clock.advance(60_000);
      const decider = { decidedBy: 'user-7', decidedAt: '2030-01-01T00:00:30.000Z', comment: 'fine by me' };

      const approved = await runGraph(
        withReject,
        { graph: 'workflow', scope, resume: { kind: 'approval', nodeId: 'gate', decision: 'approve', ...decider, ...carried(suspended) } },
        ports,
      );
      const rejected = await runGraph(
        withoutReject,
        { graph: 'workflow', scope, resume: { kind: 'approval', nodeId: 'gate', decision: 'reject', ...decider, ...carried(await suspendedAt(ports, withoutReject)) } },
        ports,
      );

      expect(approved.steps[0]).toEqual({
        nodeId: 'gate',
        type: 'approval',
        status: 'SUCCEEDED',
        startedAt: '2030-01-01T00:00:00.000Z',
        completedAt: '2030-01-01T00:01:00.000Z',
        durationMs: 60_000,
        approval: { decision: 'approve', decidedBy: 'user-7', decidedAt: '2030-01-01T00:00:30.000Z', comment: 'fine by me' },
      });
      expect(approved.steps.slice(1).every((step) => step.approval === undefined)).toBe(true);
      expect(rejected.steps[0]).toMatchObject({
        status: 'FAILED',
        error: 'Rejected at node "gate"',
        approval: { decision: 'reject', decidedBy: 'user-7', decidedAt: '2030-01-01T00:00:30.000Z', comment: 'fine by me' },
      });
    });

    it('when decided without who or when, then the step says nobody known, at the time of the resume', async () => {
      const clock = new FakeClock();
      const ports = fakePorts(clock);
      const suspended = await suspendedAt(ports);
      clock.advance(5_000);

      const outcome = await runGraph(
        withReject,
        { graph: 'workflow', scope, resume: { kind: 'approval', nodeId: 'gate', decision: 'reject', ...carried(suspended) } },
        ports,
      );

      expect(outcome.steps[0]?.approval).toEqual({ decision: 'reject', decidedBy: null, decidedAt: '2030-01-01T00:00:05.000Z', comment: null });
    });
  });

  describe('given a bot that asks a question', () => {
    const compiled = compiledGraph(
      {
        hello: { type: 'message', text: 'Hi {{ input.userName }}', next: 'name' },
        name: { type: 'ask', text: 'What is your order number?', saveAs: 'orderId', next: 'lookup' },
        lookup: { type: 'action', name: 'order.lookup', params: { orderId: 'vars.orderId' }, next: 'thanks' },
        thanks: { type: 'message', text: 'Looking up {{ vars.orderId }} ({{ input.message }})', next: 'end' },
        end: { type: 'end' },
      },
      { graph: 'bot' },
    );

    it('when it reaches the ask node, then the question is its last message and it waits for input', async () => {
      const outcome = await runGraph(compiled, { graph: 'bot', scope: { input: { message: 'hi', userName: 'Ada' } } }, fakePorts());

      expect(outcome.status).toBe('WAITING_FOR_INPUT');
      expect(outcome.messages).toEqual(['Hi Ada', 'What is your order number?']);
      expect(outcome.suspension).toEqual({ kind: 'ask', nodeId: 'name', saveAs: 'orderId' });
      expect(shapeRunResult('bot', outcome)).toEqual({
        messages: ['Hi Ada', 'What is your order number?'],
        actions: [],
        raw: { status: 'WAITING_FOR_INPUT', result: null, waitingForInput: true },
      });
    });

    it("when the session's next message answers it, then the answer is saved and the bot goes on", async () => {
      const ports = fakePorts();
      const first = stored(await runGraph(compiled, { graph: 'bot', scope: { input: { message: 'hi', userName: 'Ada' }, vars: { lang: 'en' } } }, ports));

      // A bot carries only its vars: each message is a run of its own with its own answer.
      const outcome = await runGraph(
        compiled,
        { graph: 'bot', scope: { input: { message: 'A-42' }, vars: first.vars }, resume: { kind: 'ask', nodeId: 'name', answer: 'A-42' } },
        ports,
      );

      expect(outcome.status).toBe('SUCCEEDED');
      expect(outcome.vars).toEqual({ lang: 'en', orderId: 'A-42' });
      expect(outcome.messages).toEqual(['Looking up A-42 (A-42)']);
      expect(outcome.actions).toEqual([{ name: 'order.lookup', params: { orderId: 'A-42' } }]);
      expect(outcome.steps.map((step) => step.nodeId)).toEqual(['lookup', 'thanks', 'end']);
    });

    it('when the ask node has no saveAs, then the answer is only the new input', async () => {
      const noSave = compiledGraph(
        {
          q: { type: 'ask', text: 'Anything else?', next: 'echo' },
          echo: { type: 'message', text: 'You said {{ input.message }}', next: 'end' },
          end: { type: 'end' },
        },
        { graph: 'bot' },
      );
      const first = await runGraph(noSave, { graph: 'bot', scope: {} }, fakePorts());

      const outcome = await runGraph(
        noSave,
        { graph: 'bot', scope: { input: { message: 'no' }, vars: first.vars }, resume: { kind: 'ask', nodeId: 'q', answer: 'no' } },
        fakePorts(),
      );

      expect(first.suspension).toEqual({ kind: 'ask', nodeId: 'q', saveAs: null });
      expect(outcome.vars).toEqual({});
      expect(outcome.messages).toEqual(['You said no']);
    });
  });

  describe('given a resume that does not match the graph', () => {
    const compiled = compiledGraph({
      pause: { type: 'wait', seconds: 5, next: 'end' },
      end: { type: 'end' },
    });

    it.each([
      [{ kind: 'approval' as const, nodeId: 'pause', decision: 'approve' as const }, 'Cannot resume at node "pause" of the workflow graph: it is a wait node, not approval'],
      [{ kind: 'wait' as const, nodeId: 'gone' }, 'Cannot resume at node "gone" of the workflow graph: no such node, not wait'],
    ])('when resumed with %j, then the run fails saying why and runs nothing', async (resume, message) => {
      const outcome = await runGraph(compiled, { graph: 'workflow', scope: {}, resume }, fakePorts());

      expect(outcome.status).toBe('FAILED');
      expect(outcome.errorMessage).toBe(message);
      expect(outcome.steps).toEqual([]);
    });
  });
});
