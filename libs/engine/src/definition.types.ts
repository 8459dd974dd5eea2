import type { ScheduleConfig } from './schedules/schedule-definition.types.js';

/**
 * Definition schema v1: the document a project saves as its draft and later publishes.
 *
 * These types describe a document that has passed `validateDefinition`; raw input is `unknown`
 * until then. Field kinds are fixed, whatever the node type:
 * - templates (`TemplateSource`, text with `{{ expression }}` parts): `text`, `title`, `error`,
 *   `url` and header values;
 * - JSONata expressions (`ExpressionSource`) over `{ payload, vars, session, input }`: `if`,
 *   `value`, `values.*`, `params.*`, `body` (of `http`), `until` and `enrollmentKey`;
 * - plain numbers: `seconds`.
 */

/** Project types that have a definition. */
export type ProjectType = 'CHATBOT' | 'AUTOMATION';
export const PROJECT_TYPES: readonly ProjectType[] = ['CHATBOT', 'AUTOMATION'];

/** The only schema version this library understands. */
export const SCHEMA_VERSION = 1;

/** A JSONata expression, e.g. `payload.amount > 100`. */
export type ExpressionSource = string;

/** Text with embedded expressions, e.g. `Order {{ payload.orderId }}`. */
export type TemplateSource = string;

/** The key of a node in its graph's `nodes` record. */
export type NodeId = string;

/** ONE_TIME enrolls a subject once per project; EVERY_MATCH runs every time. */
export type EnrollmentPolicy = 'ONE_TIME' | 'EVERY_MATCH';
export const ENROLLMENT_POLICIES: readonly EnrollmentPolicy[] = ['ONE_TIME', 'EVERY_MATCH'];

/** ABORT stops at a failing node; CONTINUE records the failed step and goes on. */
export type OnErrorPolicy = 'ABORT' | 'CONTINUE';
export const ON_ERROR_POLICIES: readonly OnErrorPolicy[] = ['ABORT', 'CONTINUE'];

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
export const HTTP_METHODS: readonly HttpMethod[] = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];

/** Sends `text` to the user (bot) or records it (flows, workflows). */
export interface MessageNode {
  readonly type: 'message';
  readonly text: TemplateSource;
  readonly next: NodeId;
}

/** Calls a named action with evaluated parameters. */
export interface ActionNode {
  readonly type: 'action';
  readonly name: string;
  /** Parameter name to expression; omitted means no parameters. */
  readonly params?: Readonly<Record<string, ExpressionSource>>;
  readonly next: NodeId;
}

/** Assigns variables: `vars[name] = evaluate(expression)`. */
export interface SetNode {
  readonly type: 'set';
  readonly values: Readonly<Record<string, ExpressionSource>>;
  readonly next: NodeId;
}

export interface BranchCase {
  readonly if: ExpressionSource;
  readonly next: NodeId;
}

/** Goes to the first case whose `if` is truthy, else to `else`. */
export interface BranchNode {
  readonly type: 'branch';
  readonly cases: readonly BranchCase[];
  readonly else: NodeId;
}

/** Outbound HTTP call (the outbound guard applies at run time). */
export interface HttpNode {
  readonly type: 'http';
  readonly method: HttpMethod;
  readonly url: TemplateSource;
  /** Header name to template. */
  readonly headers?: Readonly<Record<string, TemplateSource>>;
  /** Expression whose value is sent as the JSON body. */
  readonly body?: ExpressionSource;
  /** Variable that receives the response; omitted means the response is discarded. */
  readonly saveAs?: string;
  readonly next: NodeId;
}

/** Suspends the run for a number of seconds, or until the time an expression yields. */
export type WaitNode =
  | { readonly type: 'wait'; readonly seconds: number; readonly until?: undefined; readonly next: NodeId }
  | { readonly type: 'wait'; readonly until: ExpressionSource; readonly seconds?: undefined; readonly next: NodeId };

/** Suspends the run with `pendingApproval` until someone approves or rejects it. */
export interface ApprovalNode {
  readonly type: 'approval';
  readonly title: TemplateSource;
  readonly next: NodeId;
  /** Where a rejection goes; omitted means a rejection ends the run (engine decides how). */
  readonly onReject?: NodeId;
}

/** Bot graph only: replies with `text`, then waits for the session's next message. */
export interface AskNode {
  readonly type: 'ask';
  readonly text: TemplateSource;
  /** Variable that receives the answer. */
  readonly saveAs?: string;
  readonly next: NodeId;
}

/** Ends the run as FAILED with the rendered `error`. */
export interface FailNode {
  readonly type: 'fail';
  readonly error: TemplateSource;
}

/** Ends the run successfully with `value` as its result. */
export interface ReturnNode {
  readonly type: 'return';
  readonly value: ExpressionSource;
}

/** Ends the run successfully without a result. */
export interface EndNode {
  readonly type: 'end';
}

/** Any node of schema v1. */
export type DefinitionNode =
  | MessageNode
  | ActionNode
  | SetNode
  | BranchNode
  | HttpNode
  | WaitNode
  | ApprovalNode
  | AskNode
  | FailNode
  | ReturnNode
  | EndNode;

export type NodeType = DefinitionNode['type'];
export const NODE_TYPES: readonly NodeType[] = [
  'message',
  'action',
  'set',
  'branch',
  'http',
  'wait',
  'approval',
  'ask',
  'fail',
  'return',
  'end',
];

/** Nodes allowed outside the bot graph (everything but `ask`). */
export type TriggeredNode = Exclude<DefinitionNode, AskNode>;

/** A graph of nodes entered at `start`. */
export interface Graph<TNode extends DefinitionNode = DefinitionNode> {
  readonly start: NodeId;
  readonly nodes: Readonly<Record<NodeId, TNode>>;
}

/** Optional callback override for async runs of this trigger (HTTPS only). */
export interface CallbackOverride {
  readonly url: string;
  readonly secret?: string;
}

/** Run retries after a failure. */
export interface RetryPolicy {
  /** Total attempts including the first, 1..10. */
  readonly maxAttempts: number;
  /** Wait before each retry, >= 0. */
  readonly backoffSeconds: number;
}

/**
 * The external trigger section of a flow or workflow. Every field is optional; see
 * `resolveTrigger` for the defaults. Unset policies and callback fall through to the project's
 * API settings (request body, then trigger, then project defaults; first match wins).
 */
export interface TriggerConfig {
  /** Default true. When false, external trigger calls are refused. */
  readonly externalEnabled?: boolean;
  /** A `triggerKey` sent by a client must equal this. Default `external_event`. */
  readonly key?: string;
  /** Example payload; its top-level keys are required in every trigger call. */
  readonly expectedPayload?: Readonly<Record<string, unknown>>;
  readonly enrollmentPolicy?: EnrollmentPolicy;
  /** Expression yielding the ONE_TIME subject; default is the payload's `customerId`. */
  readonly enrollmentKey?: ExpressionSource;
  readonly onErrorPolicy?: OnErrorPolicy;
  readonly callback?: CallbackOverride;
  readonly retry?: RetryPolicy;
  /** When runs of this target may start (DESIGN section 13); checked by `compileFlowControl`. */
  readonly flowControl?: FlowControlConfig;
}

/** `flowControl` of a flow or workflow trigger, as written (DESIGN section 13; flow-control.ts checks it). */
export interface FlowControlConfig {
  /** At most 2 entries; no key = one pool for the target. */
  readonly concurrency?: readonly { readonly limit: number; readonly key?: string }[];
  readonly throttle?: { readonly limit: number; readonly periodSeconds: number; readonly burst?: number; readonly key?: string };
  /** Async runs only. */
  readonly debounce?: { readonly periodSeconds: number; readonly maxWaitSeconds?: number; readonly key?: string };
  /** Seconds a run is moved ahead of (positive) or behind (negative) runs of its target: a number or an expression. */
  readonly priority?: string | number;
}

/** A graph started by an external trigger: a chatbot `flow` or an automation `workflow`. */
export interface TriggeredGraph extends Graph<TriggeredNode> {
  readonly trigger?: TriggerConfig;
}

/** An automation's workflow: a triggered graph that may also repeat on schedules (DESIGN section 12). */
export interface WorkflowGraph extends TriggeredGraph {
  /** At most 20; see `normalizeSchedule` for the defaults of their fields. */
  readonly schedules?: readonly ScheduleConfig[];
}

/** The conversational graph of a chatbot; the only graph that may hold `ask` nodes. */
export type BotGraph = Graph<DefinitionNode>;

export interface ChatbotDefinition {
  readonly schemaVersion: 1;
  readonly bot: BotGraph;
  readonly flow?: TriggeredGraph;
}

export interface AutomationDefinition {
  readonly schemaVersion: 1;
  readonly workflow: WorkflowGraph;
}

/** A definition document of schema v1. */
export type Definition = ChatbotDefinition | AutomationDefinition;

/**
 * What the v1 JSON Schema accepts: any mix of graphs. Validation narrows it to a `Definition`
 * once the graphs match the project type.
 */
export interface DefinitionDocument {
  readonly schemaVersion: 1;
  readonly bot?: BotGraph;
  readonly flow?: TriggeredGraph;
  readonly workflow?: WorkflowGraph;
}

/** Graph names by position in the document. */
export type GraphName = 'bot' | 'flow' | 'workflow';
export const GRAPH_NAMES: readonly GraphName[] = ['bot', 'flow', 'workflow'];

/** Which graphs each project type must and may have. */
export const GRAPHS_BY_PROJECT_TYPE: Readonly<
  Record<ProjectType, { readonly required: readonly GraphName[]; readonly optional: readonly GraphName[] }>
> = {
  CHATBOT: { required: ['bot'], optional: ['flow'] },
  AUTOMATION: { required: ['workflow'], optional: [] },
};

export function isChatbotDefinition(definition: Definition): definition is ChatbotDefinition {
  return 'bot' in definition;
}

export function isAutomationDefinition(definition: Definition): definition is AutomationDefinition {
  return 'workflow' in definition;
}
