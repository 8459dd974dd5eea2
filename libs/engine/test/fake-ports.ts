import {
  compileDefinition,
  type CompiledDefinition,
  type DefinitionNode,
  type GraphName,
  type HttpCall,
  type HttpReply,
  type RunPorts,
  type TriggeredNode,
} from '@runline/engine';

/** 2030-01-01T00:00:00.000Z: far from the real clock, so a leak of Date.now() shows. */
export const T0 = Date.parse('2030-01-01T00:00:00.000Z');

/**
 * A clock that moves only when told: `advance(ms)`, or `tick` ms on every reading. Sleepers
 * (the engine's watchdog) wake when the clock passes their time.
 */
export class FakeClock {
  private time: number;
  private sleepers: { until: number; wake: () => void }[] = [];

  constructor(
    start = T0,
    private readonly tick = 0,
  ) {
    this.time = start;
  }

  readonly now = (): number => {
    const reading = this.time;
    this.time += this.tick;
    return reading;
  };

  advance(ms: number): void {
    this.time += ms;
    const due = this.sleepers.filter((sleeper) => sleeper.until <= this.time);
    this.sleepers = this.sleepers.filter((sleeper) => sleeper.until > this.time);
    for (const sleeper of due) sleeper.wake();
  }

  readonly sleep = (ms: number, signal: AbortSignal): Promise<void> =>
    new Promise<void>((resolve, reject) => {
      const sleeper = { until: this.time + ms, wake: resolve };
      this.sleepers.push(sleeper);
      signal.addEventListener('abort', () => {
        this.sleepers = this.sleepers.filter((other) => other !== sleeper);
        reject(new Error('sleep aborted'));
      });
    });

  /** Sleepers still waiting (the engine must cancel its watchdog when a call settles). */
  get pendingSleepers(): number {
    return this.sleepers.length;
  }
}

/** Answers outbound calls from a script and remembers every call. */
export class ScriptedHttp {
  readonly calls: HttpCall[] = [];

  constructor(private readonly script: (call: HttpCall) => HttpReply | Promise<HttpReply> = () => reply(200, {})) {}

  readonly http = async (call: HttpCall): Promise<HttpReply> => {
    this.calls.push(call);
    return this.script(call);
  };
}

export function reply(status: number, body: unknown, headers: Record<string, string> = {}): HttpReply {
  return { status, headers: { 'content-type': 'application/json', ...headers }, body };
}

/** Ports over a fake clock and a scripted http; `watchdog` lends the clock's sleep too. */
export function fakePorts(
  clock: FakeClock = new FakeClock(),
  http: ScriptedHttp = new ScriptedHttp(),
  options: { watchdog?: boolean } = {},
): RunPorts {
  return { now: clock.now, http: http.http, ...(options.watchdog === true ? { sleep: clock.sleep } : {}) };
}

/** A compiled definition with one graph: `workflow` (automation) or `bot` (chatbot). */
export function compiledGraph(
  nodes: Record<string, DefinitionNode>,
  options: { graph?: Extract<GraphName, 'bot' | 'workflow'>; start?: string } = {},
): CompiledDefinition {
  const start = options.start ?? Object.keys(nodes)[0] ?? 'start';
  if (options.graph === 'bot') return compileDefinition({ schemaVersion: 1, bot: { start, nodes } });
  return compileDefinition({ schemaVersion: 1, workflow: { start, nodes: nodes as Record<string, TriggeredNode> } });
}
