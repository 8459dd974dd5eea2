import { DEFAULT_RUN_LIMITS, RunRequestError, runGraph, type HttpCall, type HttpReply } from '@runline/engine';

import { FakeClock, ScriptedHttp, compiledGraph, fakePorts, reply } from '../test/fake-ports.js';
import { PORT_TIMEOUT_GRACE_MS } from './http-node.executor.js';

/** A loop with no way out: count, then jump back. */
const endlessLoop = compiledGraph({
  count: { type: 'set', values: { n: '($exists(vars.n) ? vars.n : 0) + 1' }, next: 'again' },
  again: { type: 'branch', cases: [{ if: 'true', next: 'count' }], else: 'done' },
  done: { type: 'end' },
});

const slowCall = compiledGraph({
  first: { type: 'message', text: 'calling', next: 'call' },
  call: { type: 'http', method: 'GET', url: 'https://slow.example.com', saveAs: 'res', next: 'after' },
  after: { type: 'message', text: 'never said', next: 'done' },
  done: { type: 'end' },
});

describe('runGraph limits', () => {
  describe('given a loop with no way out', () => {
    it('when it runs with maxSteps 50, then it fails after exactly 50 steps', async () => {
      const outcome = await runGraph(endlessLoop, { graph: 'workflow', scope: {}, limits: { maxSteps: 50 } }, fakePorts());

      expect(outcome.status).toBe('FAILED');
      expect(outcome.errorMessage).toBe('Step limit of 50 exceeded');
      expect(outcome.steps).toHaveLength(50);
      expect(outcome.vars).toEqual({ n: 25 });
    });

    it('when it runs with the default limits, then the default step limit stops it', async () => {
      const outcome = await runGraph(endlessLoop, { graph: 'workflow', scope: {} }, fakePorts());

      expect(outcome.errorMessage).toBe(`Step limit of ${DEFAULT_RUN_LIMITS.maxSteps} exceeded`);
      expect(outcome.steps).toHaveLength(DEFAULT_RUN_LIMITS.maxSteps);
      expect(outcome.trace.steps).toBe(DEFAULT_RUN_LIMITS.maxSteps);
    });

    it('when the clock moves 10 ms per reading and the time limit is 100 ms, then it ends as TIMEOUT between steps', async () => {
      const clock = new FakeClock(undefined, 10);

      const outcome = await runGraph(endlessLoop, { graph: 'workflow', scope: {}, limits: { timeoutMs: 100 } }, fakePorts(clock));

      expect(outcome.status).toBe('TIMEOUT');
      expect(outcome.errorMessage).toMatch(/^Time limit of 100 ms exceeded before node "(count|again)"$/);
      expect(outcome.steps.length).toBeGreaterThan(0);
      expect(outcome.steps.every((step) => step.status === 'SUCCEEDED')).toBe(true);
      expect(outcome.trace.durationMs).toBeGreaterThanOrEqual(100);
    });
  });

  describe('given an http node that is slow', () => {
    it('when the port answers after the deadline, then the run ends as TIMEOUT at that node', async () => {
      const clock = new FakeClock();
      const http = new ScriptedHttp(() => {
        clock.advance(5000);
        return reply(200, { late: true });
      });

      const outcome = await runGraph(slowCall, { graph: 'workflow', scope: {}, limits: { timeoutMs: 1000 } }, fakePorts(clock, http));

      expect(outcome.status).toBe('TIMEOUT');
      expect(outcome.errorMessage).toBe('Time limit of 1000 ms exceeded at node "call"');
      expect(http.calls[0]?.timeoutMs).toBe(1000 + PORT_TIMEOUT_GRACE_MS);
      expect(outcome.vars).toEqual({});
      expect(outcome.messages).toEqual(['calling']);
      expect(outcome.steps.map((step) => [step.nodeId, step.status, step.error])).toEqual([
        ['first', 'SUCCEEDED', undefined],
        ['call', 'FAILED', 'Time limit of 1000 ms exceeded at node "call"'],
      ]);
    });

    it('when the port gives up on its own timeout, then the run ends as TIMEOUT, not FAILED, even under CONTINUE', async () => {
      const clock = new FakeClock();
      const http = new ScriptedHttp((call) => {
        clock.advance(call.timeoutMs);
        return Promise.reject(new Error(`timed out after ${call.timeoutMs} ms`));
      });

      const outcome = await runGraph(
        slowCall,
        { graph: 'workflow', scope: {}, onErrorPolicy: 'CONTINUE', limits: { timeoutMs: 750 } },
        fakePorts(clock, http),
      );

      expect(outcome.status).toBe('TIMEOUT');
      expect(outcome.errorMessage).toBe('Time limit of 750 ms exceeded at node "call"');
    });

    it('when the port gives up a few ms before the clock shows its time (a timer firing early under load), then the run still ends as TIMEOUT', async () => {
      const clock = new FakeClock();
      const http = new ScriptedHttp((call) => {
        clock.advance(call.timeoutMs - 3);
        return Promise.reject(new Error('timed out'));
      });

      const outcome = await runGraph(slowCall, { graph: 'workflow', scope: {}, limits: { timeoutMs: 1000 } }, fakePorts(clock, http));

      expect(outcome.status).toBe('TIMEOUT');
      expect(outcome.errorMessage).toBe('Time limit of 1000 ms exceeded at node "call"');
    });

    it('when the port never answers and a watchdog is lent, then the run ends as TIMEOUT on time and the call is aborted', async () => {
      const clock = new FakeClock();
      let seen: HttpCall | undefined;
      const http = new ScriptedHttp((call) => {
        seen = call;
        return new Promise<HttpReply>(() => undefined);
      });

      const running = runGraph(slowCall, { graph: 'workflow', scope: {}, limits: { timeoutMs: 2000 } }, fakePorts(clock, http, { watchdog: true }));
      await new Promise((resolve) => setImmediate(resolve));
      expect(seen?.signal.aborted).toBe(false);
      clock.advance(1999);
      await new Promise((resolve) => setImmediate(resolve));
      expect(seen?.signal.aborted).toBe(false);
      clock.advance(1);
      const outcome = await running;

      expect(outcome.status).toBe('TIMEOUT');
      expect(outcome.errorMessage).toBe('Time limit of 2000 ms exceeded at node "call"');
      expect(seen?.signal.aborted).toBe(true);
      expect(outcome.trace.durationMs).toBe(2000);
    });

    it('when the port answers in time with a watchdog lent, then the watchdog is cancelled and the run goes on', async () => {
      const clock = new FakeClock();
      const http = new ScriptedHttp(() => {
        clock.advance(300);
        return reply(200, { ok: true });
      });

      const outcome = await runGraph(slowCall, { graph: 'workflow', scope: {}, limits: { timeoutMs: 2000 } }, fakePorts(clock, http, { watchdog: true }));

      expect(outcome.status).toBe('SUCCEEDED');
      expect(outcome.messages).toEqual(['calling', 'never said']);
      expect(clock.pendingSleepers).toBe(0);
      expect(http.calls[0]?.signal.aborted).toBe(false);
    });

    it('when the port fails after the watchdog fired, then its late failure changes nothing', async () => {
      const clock = new FakeClock();
      let fail: (error: Error) => void = () => undefined;
      const http = new ScriptedHttp(
        () =>
          new Promise<HttpReply>((_resolve, reject) => {
            fail = reject;
          }),
      );

      const running = runGraph(slowCall, { graph: 'workflow', scope: {}, limits: { timeoutMs: 100 } }, fakePorts(clock, http, { watchdog: true }));
      await new Promise((resolve) => setImmediate(resolve));
      clock.advance(100);
      const outcome = await running;
      fail(new Error('late failure must not surface as an unhandled rejection'));
      await new Promise((resolve) => setImmediate(resolve));

      expect(outcome.status).toBe('TIMEOUT');
      expect(outcome.vars).toEqual({});
    });
  });

  describe('given limits that make no sense', () => {
    it.each([
      [{ maxSteps: 0 }, 'limits.maxSteps must be a positive integer, got 0'],
      [{ maxSteps: 2.5 }, 'limits.maxSteps must be a positive integer, got 2.5'],
      [{ timeoutMs: -1 }, 'limits.timeoutMs must be a positive number, got -1'],
      [{ timeoutMs: Number.NaN }, 'limits.timeoutMs must be a positive number, got NaN'],
    ])('when the request has %j, then it is refused', async (limits, message) => {
      await expect(runGraph(endlessLoop, { graph: 'workflow', scope: {}, limits }, fakePorts())).rejects.toThrow(new RunRequestError(message));
    });
  });
});
