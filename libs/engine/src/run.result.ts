import type { GraphName } from './definition.types.js';
import type { JsonValue, RunAction, RunOutcome, RunStatus } from './run.types.js';

/** `result` of a bot message answer: what the bot said and did, and where the run stands. */
export interface BotRunResult {
  readonly messages: string[];
  readonly actions: RunAction[];
  readonly raw: {
    readonly status: RunStatus;
    /** A `return` node's value, else null. */
    readonly result: JsonValue;
    /** True when the bot asked a question and the session's next message answers it. */
    readonly waitingForInput: boolean;
  };
}

/** `result` of a chatbot flow run. */
export interface FlowRunResult {
  readonly messages: string[];
  readonly actions: RunAction[];
}

/** The `result` field per graph: bot and flow answers are fixed shapes, a workflow's is its own. */
export type RunResultOf<G extends GraphName> = G extends 'bot' ? BotRunResult : G extends 'flow' ? FlowRunResult : JsonValue;

/**
 * Shapes an outcome into the `result` the spec shows for the graph's endpoints: a bot answer
 * `{ messages, actions, raw }`, a flow `{ messages, actions }`, an automation whatever its
 * workflow returned (null when it ended without `return`). The caller decides whether a failed
 * run shows a result at all.
 */
export function shapeRunResult<G extends GraphName>(graph: G, outcome: RunOutcome): RunResultOf<G>;
export function shapeRunResult(graph: GraphName, outcome: RunOutcome): BotRunResult | FlowRunResult | JsonValue {
  switch (graph) {
    case 'bot':
      return {
        messages: outcome.messages,
        actions: outcome.actions,
        raw: { status: outcome.status, result: outcome.result, waitingForInput: outcome.status === 'WAITING_FOR_INPUT' },
      };
    case 'flow':
      return { messages: outcome.messages, actions: outcome.actions };
    case 'workflow':
      return outcome.result;
  }
}
