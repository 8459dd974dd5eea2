import { validateDefinition, type CompiledFlowControl } from '@runline/engine';
import { debounceStep, decideStart, flowRulesOf, startedTrace, type DebounceSlot, type FlowRules, type SlotState } from './flow-decision.js';

/** The trigger's flowControl as the invocation service gets it: compiled with a published definition. */
function compileFlowControlForTest(flowControl: unknown): CompiledFlowControl {
  const result = validateDefinition('AUTOMATION', { schemaVersion: 1, workflow: { trigger: { flowControl }, start: 'n1', nodes: { n1: { type: 'end' } } } });
  if (!result.ok) throw new Error(result.summary);
  return result.compiled.graphs.workflow!.trigger!.flowControl!;
}

const idle: SlotState = { running: new Map(), throttleTat: new Map(), waitedAheadOn: null };

function rules(flowControl: unknown, values: { concurrencyKeys?: string[]; throttleKey?: string; prioritySeconds?: number } = {}, queuedAt = 1_000_000): FlowRules {
  return flowRulesOf(
    'p1',
    'AUTOMATION',
    compileFlowControlForTest(flowControl),
    { concurrencyKeys: values.concurrencyKeys ?? [], ...(values.throttleKey === undefined ? {} : { throttleKey: values.throttleKey }), prioritySeconds: values.prioritySeconds ?? 0 },
    queuedAt,
  );
}

describe('flow control decisions', () => {
  describe('slots of a run', () => {
    it('names one slot per concurrency entry and per throttle, by project, target and key', () => {
      const found = rules({ concurrency: [{ limit: 5, key: 'payload.c' }, { limit: 1 }], throttle: { limit: 10, periodSeconds: 60, burst: 2 } }, { concurrencyKeys: ['c1', ''], throttleKey: 'c1' });

      expect(found.slots).toEqual([
        { kind: 'concurrency', slot: 'c0:p1:AUTOMATION:c1', limit: 5, key: 'c1' },
        { kind: 'concurrency', slot: 'c1:p1:AUTOMATION:', limit: 1, key: '' },
        { kind: 'throttle', slot: 't:p1:AUTOMATION:c1', limit: 10, periodMs: 60_000, burst: 2, key: 'c1' },
      ]);
    });

    it('ranks a run with priority p as if it had been queued p seconds earlier', () => {
      expect(rules({ priority: 60 }, { prioritySeconds: 60 }, 1_000_000).rank).toBe(940_000);
      expect(rules({}, { prioritySeconds: -10 }, 1_000_000).rank).toBe(1_010_000);
    });
  });

  describe('concurrency', () => {
    const limited = rules({ concurrency: [{ limit: 2, key: 'payload.c' }] }, { concurrencyKeys: ['k'] });

    it('starts a run while fewer than the limit of its key run', () => {
      expect(decideStart(limited, { ...idle, running: new Map([['c0:p1:AUTOMATION:k', 1]]) }, 0)).toEqual({ start: true, throttleTat: new Map() });
    });

    it('holds a run back when the limit of its key runs, saying what for and its key', () => {
      expect(decideStart(limited, { ...idle, running: new Map([['c0:p1:AUTOMATION:k', 2]]) }, 0)).toEqual({ start: false, reason: 'concurrency', slot: 'c0:p1:AUTOMATION:k', key: 'k', retryAt: null });
    });

    it('holds a run back while a run ranked before it waits for one of its slots (first come, first served; priority first)', () => {
      expect(decideStart(limited, { ...idle, waitedAheadOn: 'c0:p1:AUTOMATION:k' }, 0)).toMatchObject({ start: false, reason: 'concurrency' });
    });
  });

  describe('throttle (GCRA)', () => {
    const throttled = rules({ throttle: { limit: 2, periodSeconds: 1, burst: 1 } }, { throttleKey: '' });
    const slot = 't:p1:AUTOMATION:';

    /** Starts as many runs as the throttle lets through at each of `times`, trying `tries` at each. */
    function startsAt(times: number[], tries: number): number[] {
      const tat = new Map<string, number>();
      const started: number[] = [];
      for (const now of times) {
        for (let attempt = 0; attempt < tries; attempt++) {
          const decision = decideStart(throttled, { ...idle, throttleTat: tat }, now);
          if (!decision.start) break;
          for (const [key, value] of decision.throttleTat) tat.set(key, value);
          started.push(now);
        }
      }
      return started;
    }

    it('lets 1 + burst through at once, then one per period / limit', () => {
      expect(startsAt([0, 100, 499, 500, 999, 1000], 10)).toEqual([0, 0, 500, 1000]);
    });

    it('never lets more than limit + burst start in any period, however often runs are tried', () => {
      const times = Array.from({ length: 5000 }, (_, index) => index);
      const started = startsAt(times, 5);
      for (const at of started) expect(started.filter((other) => other >= at && other < at + 1000).length).toBeLessThanOrEqual(3);
      expect(started.length).toBeGreaterThanOrEqual(10);
    });

    it('counts a time that comes within aheadMs as come, each start then taking its own time in the account', () => {
      const fast = rules({ throttle: { limit: 4000, periodSeconds: 1, burst: 0 } }, { throttleKey: '' });
      const tat = new Map<string, number>();
      let started = 0;
      // Decided at one instant: 0.25 ms apart in the account (at 0, 0.25, ... 1), so 1 ms ahead lets 5 through, not more.
      for (let attempt = 0; attempt < 200; attempt++) {
        const decision = decideStart(fast, { ...idle, throttleTat: tat }, 0, 1);
        if (!decision.start) {
          expect(decision.retryAt).toBe(2);
          break;
        }
        for (const [key, value] of decision.throttleTat) tat.set(key, value);
        started++;
      }
      expect(started).toBe(5);
      expect(decideStart(fast, { ...idle, throttleTat: new Map([[slot, 0.5]]) }, 0)).toMatchObject({ start: false, retryAt: 1 });
    });

    it('says when a held-back run may conform', () => {
      const tat = new Map([[slot, 1500]]);
      expect(decideStart(throttled, { ...idle, throttleTat: tat }, 0)).toEqual({ start: false, reason: 'throttle', slot, key: '', retryAt: 1000 });
    });
  });

  it('reports how long a started run waited and for what, each reason once', () => {
    expect(startedTrace(1000, ['concurrency', 'concurrency', 'throttle'], 1750)).toEqual({ waitedMs: 750, reasons: ['concurrency', 'throttle'] });
    expect(startedTrace(null, [], 1750)).toEqual({ waitedMs: 0, reasons: [] });
  });

  describe('debounce', () => {
    const debounce: DebounceSlot = { slot: 'd:p1:AUTOMATION:k', periodMs: 5000, maxWaitMs: 60_000, key: 'k' };

    it('makes a run that is in no burst join one, due a period later', () => {
      expect(debounceStep(debounce, [], 'r1', 1000)).toEqual({ step: 'join', retryAt: 6000 });
      expect(debounceStep(debounce, [{ invocationId: 'r0', joinedAt: 0 }], 'r1', 1000)).toEqual({ step: 'join', retryAt: 6000 });
    });

    it('keeps an earlier run of a burst waiting for the last one', () => {
      const members = [{ invocationId: 'r1', joinedAt: 0 }, { invocationId: 'r2', joinedAt: 1000 }];
      expect(debounceStep(debounce, members, 'r1', 9000)).toEqual({ step: 'wait', retryAt: null });
    });

    it('lets the last run go on a period after it joined, superseding the others', () => {
      const members = [{ invocationId: 'r1', joinedAt: 0 }, { invocationId: 'r2', joinedAt: 1000 }, { invocationId: 'r3', joinedAt: 2000 }];
      expect(debounceStep(debounce, members, 'r3', 6999)).toEqual({ step: 'wait', retryAt: 7000 });
      expect(debounceStep(debounce, members, 'r3', 7000)).toEqual({ step: 'close', superseded: ['r1', 'r2'] });
    });

    it('closes a burst that never pauses maxWait after its first run', () => {
      const members = Array.from({ length: 20 }, (_, index) => ({ invocationId: `r${String(index).padStart(2, '0')}`, joinedAt: index * 4000 }));
      expect(debounceStep(debounce, members, 'r19', 60_000)).toEqual({ step: 'close', superseded: members.slice(0, 19).map((member) => member.invocationId) });
    });

    it('applies to async runs only', () => {
      const flowControl = { debounce: { periodSeconds: 5 } };
      expect(flowRulesOf('p1', 'AUTOMATION', compileFlowControlForTest(flowControl), { concurrencyKeys: [], debounceKey: 'k', prioritySeconds: 0 }, 0).debounce).toEqual({
        slot: 'd:p1:AUTOMATION:k',
        periodMs: 5000,
        maxWaitMs: null,
        key: 'k',
      });
      expect(flowRulesOf('p1', 'AUTOMATION', compileFlowControlForTest(flowControl), { concurrencyKeys: [], prioritySeconds: 0 }, 0, false).debounce).toBeUndefined();
    });
  });
});
