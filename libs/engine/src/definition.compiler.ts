import {
  InvalidDefinitionError,
  errorAt,
  formatField,
  summarizeDefinitionErrors,
  type DefinitionError,
} from './definition.errors.js';
import {
  GRAPHS_BY_PROJECT_TYPE,
  GRAPH_NAMES,
  isChatbotDefinition,
  type Definition,
  type DefinitionDocument,
  type DefinitionNode,
  type GraphName,
  type HttpMethod,
  type NodeId,
  type ProjectType,
  type TriggerConfig,
} from './definition.types.js';
import {
  isStaticTemplate,
  tryCompileExpression,
  tryCompileTemplate,
  type CompileOutcome,
  type CompiledExpression,
  type CompiledTemplate,
} from './expression.compiler.js';
import { compileFlowControl, type CompiledFlowControl } from './flow-control.js';
import { resolveTrigger, type ResolvedTrigger } from './trigger.config.js';

/** A node with its expressions compiled and its templates split; `id` is its key in the graph. */
export type CompiledNode =
  | { readonly type: 'message'; readonly id: NodeId; readonly text: CompiledTemplate; readonly next: NodeId }
  | {
      readonly type: 'action';
      readonly id: NodeId;
      readonly name: string;
      /** Parameter name to expression, in document order; empty when the node has none. */
      readonly params: ReadonlyMap<string, CompiledExpression>;
      readonly next: NodeId;
    }
  | {
      readonly type: 'set';
      readonly id: NodeId;
      /** Variable name to expression, in document order. */
      readonly values: ReadonlyMap<string, CompiledExpression>;
      readonly next: NodeId;
    }
  | {
      readonly type: 'branch';
      readonly id: NodeId;
      readonly cases: readonly { readonly if: CompiledExpression; readonly next: NodeId }[];
      readonly else: NodeId;
    }
  | {
      readonly type: 'http';
      readonly id: NodeId;
      readonly method: HttpMethod;
      readonly url: CompiledTemplate;
      /** Header name to template; empty when the node sets none. */
      readonly headers: ReadonlyMap<string, CompiledTemplate>;
      readonly body?: CompiledExpression;
      readonly saveAs?: string;
      readonly next: NodeId;
    }
  | {
      readonly type: 'wait';
      readonly id: NodeId;
      /** Exactly one of `seconds` and `until` is set. */
      readonly seconds?: number;
      readonly until?: CompiledExpression;
      readonly next: NodeId;
    }
  | {
      readonly type: 'approval';
      readonly id: NodeId;
      readonly title: CompiledTemplate;
      readonly next: NodeId;
      readonly onReject?: NodeId;
    }
  | {
      readonly type: 'ask';
      readonly id: NodeId;
      readonly text: CompiledTemplate;
      readonly saveAs?: string;
      readonly next: NodeId;
    }
  | { readonly type: 'fail'; readonly id: NodeId; readonly error: CompiledTemplate }
  | { readonly type: 'return'; readonly id: NodeId; readonly value: CompiledExpression }
  | { readonly type: 'end'; readonly id: NodeId };

/** The compiled node of one type, e.g. `CompiledNodeOf<'http'>`. */
export type CompiledNodeOf<T extends CompiledNode['type']> = Extract<CompiledNode, { readonly type: T }>;

/** A flow or workflow trigger with defaults applied and its enrollment key compiled. */
export interface CompiledTrigger extends ResolvedTrigger {
  readonly enrollmentKeyExpression?: CompiledExpression;
  /** Its `flowControl`, keys and priority compiled; absent when the trigger sets none. */
  readonly flowControl?: CompiledFlowControl;
}

export interface CompiledGraph {
  readonly name: GraphName;
  readonly start: NodeId;
  /** Every node by id, in document order. */
  readonly nodes: ReadonlyMap<NodeId, CompiledNode>;
  /** Set for `flow` and `workflow` (defaults applied when the document has no trigger). */
  readonly trigger?: CompiledTrigger;
  /** `isSelfContained(this)`, worked out once when compiling. */
  readonly selfContained: boolean;
}

/** Node types whose work stays inside the run: no outside call, no pause. */
const SELF_CONTAINED_NODES: ReadonlySet<CompiledNode['type']> = new Set(['message', 'action', 'set', 'branch', 'fail', 'return', 'end']);

/**
 * Whether every run of `graph` ends in one go without touching anything outside itself: no
 * `http` call, and no `wait`, `approval` or `ask` pause. (An `action` is only recorded in the
 * result.) Such a run can be executed first and recorded once, when it has ended.
 */
export function isSelfContained(graph: Pick<CompiledGraph, 'nodes'>): boolean {
  for (const node of graph.nodes.values()) if (!SELF_CONTAINED_NODES.has(node.type)) return false;
  return true;
}

/**
 * A definition compiled once per version: every expression compiled and every template split,
 * so runs only evaluate. Immutable and safe to share between concurrent runs.
 */
export interface CompiledDefinition {
  readonly projectType: ProjectType;
  readonly definition: Definition;
  readonly graphs: Readonly<Partial<Record<GraphName, CompiledGraph>>>;
}

/** The project type a definition's graphs imply. */
export function projectTypeOf(definition: Definition): ProjectType {
  return isChatbotDefinition(definition) ? 'CHATBOT' : 'AUTOMATION';
}

/**
 * Compiles a definition that has passed `validateDefinition` (for example a stored published
 * version). Throws InvalidDefinitionError if it does not compile after all.
 */
export function compileDefinition(definition: Definition): CompiledDefinition {
  const { compiled, errors } = analyzeDefinition(projectTypeOf(definition), definition);
  if (errors.length > 0) throw new InvalidDefinitionError(errors, summarizeDefinitionErrors(errors));
  return compiled;
}

/**
 * Cross-field checks and compilation in one walk over a structurally valid document, in
 * document order. Every graph present is checked, allowed or not, so one report lists all
 * problems. `compiled` is only meaningful when `errors` is empty.
 */
export function analyzeDefinition(
  projectType: ProjectType,
  document: DefinitionDocument,
): { compiled: CompiledDefinition; errors: DefinitionError[] } {
  const errors = checkGraphKinds(projectType, document);
  const graphs: Partial<Record<GraphName, CompiledGraph>> = {};
  for (const name of GRAPH_NAMES) {
    const graph = document[name];
    if (graph === undefined) continue;
    // Flows and workflows always get a trigger, with defaults when the document sets none.
    const trigger = name === 'bot' ? undefined : ('trigger' in graph ? graph.trigger : undefined) ?? {};
    graphs[name] = compileGraph(name, graph.start, graph.nodes, trigger, errors);
  }
  // With no errors the graphs match the project type, which is what makes this a Definition.
  return { compiled: { projectType, definition: document as Definition, graphs }, errors };
}

/** CHATBOT: `bot` required, `flow` optional. AUTOMATION: `workflow` required. Nothing else. */
export function checkGraphKinds(projectType: ProjectType, document: DefinitionDocument): DefinitionError[] {
  const { required, optional } = GRAPHS_BY_PROJECT_TYPE[projectType];
  const kind = `${projectType === 'AUTOMATION' ? 'an' : 'a'} ${projectType} definition`;
  const errors: DefinitionError[] = [];
  for (const name of required) {
    if (document[name] === undefined) {
      errors.push({ path: `/${name}`, graph: name, message: `${kind} needs a "${name}" graph` });
    }
  }
  const allowed = [...required, ...optional];
  for (const name of GRAPH_NAMES) {
    if (document[name] !== undefined && !allowed.includes(name)) {
      const expected = allowed.map((graph) => `"${graph}"`).join(' and ');
      errors.push({
        path: `/${name}`,
        graph: name,
        message: `${kind} cannot have a "${name}" graph (it has ${expected})`,
      });
    }
  }
  return errors;
}

function compileGraph(
  name: GraphName,
  start: NodeId,
  nodes: Readonly<Record<NodeId, DefinitionNode>>,
  trigger: TriggerConfig | undefined,
  errors: DefinitionError[],
): CompiledGraph {
  if (!Object.hasOwn(nodes, start)) errors.push(errorAt([name, 'start'], `start node "${start}" does not exist`));
  const compiledTrigger = trigger === undefined ? undefined : compileTrigger(name, trigger, errors);
  const compiledNodes = new Map<NodeId, CompiledNode>();
  for (const [id, node] of Object.entries(nodes)) {
    compiledNodes.set(id, compileNode(new NodeContext(name, id, nodes, errors), node));
  }
  return {
    name,
    start,
    nodes: compiledNodes,
    ...(compiledTrigger === undefined ? {} : { trigger: compiledTrigger }),
    selfContained: isSelfContained({ nodes: compiledNodes }),
  };
}

function compileTrigger(graph: GraphName, trigger: TriggerConfig, errors: DefinitionError[]): CompiledTrigger {
  const resolved = resolveTrigger(graph === 'workflow' ? 'AUTOMATION' : 'CHATBOT', trigger);
  const callbackUrl = trigger.callback?.url;
  if (callbackUrl !== undefined && !isHttpUrl(callbackUrl, ['https:'])) {
    errors.push(errorAt([graph, 'trigger', 'callback', 'url'], 'callback.url is not a valid https URL'));
  }
  const flowControl = compileFlowControl(graph, trigger.flowControl, errors);
  const withFlowControl = flowControl === undefined ? resolved : { ...resolved, flowControl };
  if (trigger.enrollmentKey === undefined) return withFlowControl;
  const outcome = tryCompileExpression(trigger.enrollmentKey);
  if (!outcome.ok) {
    errors.push(errorAt([graph, 'trigger', 'enrollmentKey'], `enrollmentKey ${outcome.problem}`));
    return withFlowControl;
  }
  return { ...withFlowControl, enrollmentKeyExpression: outcome.value };
}

/** Where a node is, plus the helpers that record its problems while compiling it. */
class NodeContext {
  constructor(
    readonly graph: GraphName,
    readonly id: NodeId,
    private readonly nodes: Readonly<Record<NodeId, DefinitionNode>>,
    private readonly errors: DefinitionError[],
  ) {}

  fail(field: readonly string[], text: string): void {
    this.errors.push(errorAt([this.graph, 'nodes', this.id, ...field], text));
  }

  /** A reference to another node of the same graph. */
  ref(target: NodeId, ...field: string[]): NodeId {
    if (!Object.hasOwn(this.nodes, target)) this.fail(field, `${formatField(field)} "${target}" does not exist`);
    return target;
  }

  expression(source: string, ...field: string[]): CompiledExpression {
    return this.compiled(tryCompileExpression(source), field) ?? uncompiledExpression(source);
  }

  template(source: string, ...field: string[]): CompiledTemplate {
    return this.compiled(tryCompileTemplate(source), field) ?? { kind: 'template', source, parts: [] };
  }

  expressions(map: Readonly<Record<string, string>> | undefined, field: string): Map<string, CompiledExpression> {
    return new Map(Object.entries(map ?? {}).map(([key, source]) => [key, this.expression(source, field, key)]));
  }

  private compiled<T>(outcome: CompileOutcome<T>, field: readonly string[]): T | undefined {
    if (outcome.ok) return outcome.value;
    this.fail(field, `${formatField(field)} ${outcome.problem}`);
    return undefined;
  }
}

function compileNode(at: NodeContext, node: DefinitionNode): CompiledNode {
  const id = at.id;
  switch (node.type) {
    case 'message':
      return { type: 'message', id, text: at.template(node.text, 'text'), next: at.ref(node.next, 'next') };
    case 'action':
      return {
        type: 'action',
        id,
        name: node.name,
        params: at.expressions(node.params, 'params'),
        next: at.ref(node.next, 'next'),
      };
    case 'set':
      return { type: 'set', id, values: at.expressions(node.values, 'values'), next: at.ref(node.next, 'next') };
    case 'branch':
      return {
        type: 'branch',
        id,
        cases: node.cases.map((branchCase, index) => ({
          if: at.expression(branchCase.if, 'cases', String(index), 'if'),
          next: at.ref(branchCase.next, 'cases', String(index), 'next'),
        })),
        else: at.ref(node.else, 'else'),
      };
    case 'http':
      return compileHttp(at, node);
    case 'wait':
      return compileWait(at, node);
    case 'approval':
      return {
        type: 'approval',
        id,
        title: at.template(node.title, 'title'),
        next: at.ref(node.next, 'next'),
        ...(node.onReject === undefined ? {} : { onReject: at.ref(node.onReject, 'onReject') }),
      };
    case 'ask':
      if (at.graph !== 'bot') at.fail([], `ask nodes are only allowed in the bot graph, not in "${at.graph}"`);
      return {
        type: 'ask',
        id,
        text: at.template(node.text, 'text'),
        next: at.ref(node.next, 'next'),
        ...(node.saveAs === undefined ? {} : { saveAs: node.saveAs }),
      };
    case 'fail':
      return { type: 'fail', id, error: at.template(node.error, 'error') };
    case 'return':
      return { type: 'return', id, value: at.expression(node.value, 'value') };
    case 'end':
      return { type: 'end', id };
  }
}

function compileHttp(at: NodeContext, node: Extract<DefinitionNode, { type: 'http' }>): CompiledNode {
  const url = at.template(node.url, 'url');
  if (url.parts.length > 0 && isStaticTemplate(url) && !isHttpUrl(node.url, ['http:', 'https:'])) {
    at.fail(['url'], 'url is not an absolute http or https URL');
  }
  const headers = new Map(
    Object.entries(node.headers ?? {}).map(([header, source]) => [header, at.template(source, 'headers', header)]),
  );
  return {
    type: 'http',
    id: at.id,
    method: node.method,
    url,
    headers,
    ...(node.body === undefined ? {} : { body: at.expression(node.body, 'body') }),
    ...(node.saveAs === undefined ? {} : { saveAs: node.saveAs }),
    next: at.ref(node.next, 'next'),
  };
}

function compileWait(at: NodeContext, node: Extract<DefinitionNode, { type: 'wait' }>): CompiledNode {
  const next = at.ref(node.next, 'next');
  if (node.seconds !== undefined && node.until !== undefined) {
    at.fail([], 'a wait node needs exactly one of seconds or until, not both');
  } else if (node.seconds === undefined && node.until === undefined) {
    at.fail([], 'a wait node needs exactly one of seconds or until');
  }
  return {
    type: 'wait',
    id: at.id,
    ...(node.seconds === undefined ? {} : { seconds: node.seconds }),
    ...(node.until === undefined ? {} : { until: at.expression(node.until, 'until') }),
    next,
  };
}

function isHttpUrl(text: string, protocols: readonly string[]): boolean {
  if (!URL.canParse(text)) return false;
  const url = new URL(text);
  return protocols.includes(url.protocol) && url.hostname !== '';
}

/** Stands in for an expression that did not compile; never leaves analyzeDefinition. */
function uncompiledExpression(source: string): CompiledExpression {
  return {
    kind: 'expression',
    source,
    program: { evaluate: () => Promise.reject(new Error(`expression ${JSON.stringify(source)} did not compile`)) },
  };
}
