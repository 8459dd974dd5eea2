import type { CompiledNode, CompiledNodeOf } from './definition.compiler.js';
import type { NodeId } from './definition.types.js';
import type { CompiledExpression } from './expression.compiler.js';
import { evaluate, renderTemplate, type EvaluationScope } from './expression.evaluator.js';
import { callWithDeadline } from './http-node.executor.js';
import { toJsonOrNull, toJsonValue } from './json.value.js';
import type { JsonValue, RunAction, RunPorts, RunVars, Suspension } from './run.types.js';

/** What the run loop lends a node: the run's mutable state, its ports and its deadline. */
export interface NodeContext {
  readonly payload: unknown;
  readonly input: unknown;
  readonly session: unknown;
  readonly vars: RunVars;
  readonly messages: string[];
  readonly actions: RunAction[];
  readonly ports: RunPorts;
  /** Epoch ms on the `ports.now()` clock at which the run times out. */
  readonly deadline: number;
}

/** How a node that did not fail hands control back to the run loop. */
export type NodeEffect =
  | { readonly kind: 'next'; readonly next: NodeId }
  | { readonly kind: 'return'; readonly result: JsonValue }
  /** A `fail` node: ends the run whatever the on-error policy. */
  | { readonly kind: 'fail'; readonly error: string }
  | { readonly kind: 'suspend'; readonly suspension: Suspension }
  /** The run's time ran out while the node was waiting on a port. */
  | { readonly kind: 'timeout' };

/** A node could not do its work; the run loop applies the on-error policy. */
export class NodeFailure extends Error {
  constructor(reason: string) {
    super(reason);
    this.name = 'NodeFailure';
  }
}

/**
 * Executes one node. A node changes the run's state only once all of its work has succeeded
 * (a `set` whose second value fails assigns nothing), so a failed step leaves no half of itself
 * behind for CONTINUE to trip over. Failures are thrown (NodeFailure, expression errors).
 */
export async function executeNode(node: CompiledNode, context: NodeContext): Promise<NodeEffect> {
  switch (node.type) {
    case 'message':
      context.messages.push(await renderTemplate(node.text, scopeOf(context)));
      return { kind: 'next', next: node.next };
    case 'action':
      context.actions.push({ name: node.name, params: actionParams(await evaluateAll(node.params, context, 'params')) });
      return { kind: 'next', next: node.next };
    case 'set':
      assignVars(context.vars, await evaluateAll(node.values, context, 'values'));
      return { kind: 'next', next: node.next };
    case 'branch':
      return { kind: 'next', next: await chooseBranch(node, context) };
    case 'http':
      return executeHttp(node, context);
    case 'wait':
      return { kind: 'suspend', suspension: { kind: 'wait', nodeId: node.id, resumeAt: await resumeTime(node, context) } };
    case 'approval': {
      const title = await renderTemplate(node.title, scopeOf(context));
      return { kind: 'suspend', suspension: { kind: 'approval', nodeId: node.id, title, requestedAt: iso(context.ports.now()) } };
    }
    case 'ask':
      context.messages.push(await renderTemplate(node.text, scopeOf(context)));
      return { kind: 'suspend', suspension: { kind: 'ask', nodeId: node.id, saveAs: node.saveAs ?? null } };
    case 'fail':
      return { kind: 'fail', error: await renderTemplate(node.error, scopeOf(context)) };
    case 'return':
      return { kind: 'return', result: toJsonOrNull(await evaluate(node.value, scopeOf(context)), 'value') };
    case 'end':
      return { kind: 'return', result: null };
  }
}

/**
 * Where a failed node goes under CONTINUE: its `next`, a branch's `else`. Undefined ends the
 * run FAILED: `return` has nowhere to go, and an `approval` never falls through to `next`
 * (that would approve without a person).
 */
export function continuationOf(node: CompiledNode): NodeId | undefined {
  switch (node.type) {
    case 'branch':
      return node.else;
    case 'message':
    case 'action':
    case 'set':
    case 'http':
    case 'wait':
    case 'ask':
      return node.next;
    case 'approval':
    case 'fail':
    case 'return':
    case 'end':
      return undefined;
  }
}

export function iso(epochMs: number): string {
  return new Date(epochMs).toISOString();
}

function scopeOf(context: NodeContext): EvaluationScope {
  return { payload: context.payload, input: context.input, session: context.session, vars: context.vars };
}

/**
 * Evaluates every expression against the state before the node, so the `values` of one `set`
 * do not see each other and their order does not matter. A value that selects nothing is
 * undefined: `action` leaves such a parameter out, `set` unsets the variable.
 */
async function evaluateAll(
  expressions: ReadonlyMap<string, CompiledExpression>,
  context: NodeContext,
  field: string,
): Promise<Map<string, JsonValue | undefined>> {
  const scope = scopeOf(context);
  const values = new Map<string, JsonValue | undefined>();
  for (const [name, expression] of expressions) {
    values.set(name, toJsonValue(await evaluate(expression, scope), `${field}.${name}`));
  }
  return values;
}

function actionParams(values: Map<string, JsonValue | undefined>): Record<string, JsonValue> {
  return Object.fromEntries([...values].filter((entry): entry is [string, JsonValue] => entry[1] !== undefined));
}

/** A variable set to nothing is removed, so `vars` always equals its JSON form. */
function assignVars(vars: RunVars, values: Map<string, JsonValue | undefined>): void {
  for (const [name, value] of values) {
    if (value === undefined) delete vars[name];
    else vars[name] = value;
  }
}

/** The first case whose `if` is truthy (JSONata's boolean rules), else `else`. */
async function chooseBranch(node: CompiledNodeOf<'branch'>, context: NodeContext): Promise<NodeId> {
  const scope = scopeOf(context);
  for (const branchCase of node.cases) {
    if (isTruthy(await evaluate(branchCase.if, scope))) return branchCase.next;
  }
  return node.else;
}

/** JSONata's `$boolean`: empty strings, 0, null, nothing, empty arrays and objects are false. */
function isTruthy(value: unknown): boolean {
  if (value === undefined || value === null || value === false || value === 0 || value === '') return false;
  if (typeof value === 'number') return !Number.isNaN(value);
  if (typeof value === 'function') return false;
  if (Array.isArray(value)) return value.some(isTruthy);
  if (typeof value === 'object') return Object.keys(value).length > 0;
  return true;
}

async function resumeTime(node: CompiledNodeOf<'wait'>, context: NodeContext): Promise<string> {
  if (node.until === undefined) return iso(context.ports.now() + (node.seconds ?? 0) * 1000);
  const until = await evaluate(node.until, scopeOf(context));
  const epochMs = typeof until === 'number' ? until : typeof until === 'string' ? Date.parse(until) : Number.NaN;
  if (!Number.isFinite(epochMs) || Math.abs(epochMs) > 8.64e15) {
    throw new NodeFailure(
      `until must yield an ISO 8601 date-time or epoch milliseconds, got ${preview(until)}`,
    );
  }
  return iso(epochMs);
}

async function executeHttp(node: CompiledNodeOf<'http'>, context: NodeContext): Promise<NodeEffect> {
  const scope = scopeOf(context);
  const url = await renderTemplate(node.url, scope);
  const headers: Record<string, string> = {};
  for (const [name, template] of node.headers) headers[name] = await renderTemplate(template, scope);
  const body = node.body === undefined ? undefined : toJsonValue(await evaluate(node.body, scope), 'body');
  if (body !== undefined && !Object.keys(headers).some((name) => name.toLowerCase() === 'content-type')) {
    headers['content-type'] = 'application/json';
  }

  const answer = await callWithDeadline(context.ports, context.deadline, {
    nodeId: node.id,
    method: node.method,
    url,
    headers,
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  if (answer.kind === 'timeout') return answer;
  if (answer.kind === 'error') throw new NodeFailure(`${node.method} request failed: ${answer.reason}`);

  const { status } = answer.reply;
  // Saved before judging the status: under CONTINUE a later node can branch on vars.x.status.
  if (node.saveAs !== undefined) {
    context.vars[node.saveAs] = {
      status,
      headers: toJsonOrNull(answer.reply.headers, 'response headers'),
      body: toJsonOrNull(answer.reply.body, 'response body'),
    };
  }
  if (status < 200 || status > 299) throw new NodeFailure(`${node.method} request answered HTTP ${status}`);
  return { kind: 'next', next: node.next };
}

function preview(value: unknown): string {
  if (value === undefined) return 'nothing';
  const text = typeof value === 'string' ? JSON.stringify(value) : (JSON.stringify(value) ?? typeof value);
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}
