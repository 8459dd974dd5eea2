/**
 * A trigger's `flowControl` (DESIGN section 13): when runs of one target may start. Checked and
 * compiled once per definition version (keys and priority are JSONata over `{payload, input}`),
 * evaluated once per run. Pure; the run starter (invocation service) applies the values.
 */
import type { DefinitionError } from './definition.errors.js';
import { toPointer } from './definition.errors.js';
import type { FlowControlConfig, GraphName } from './definition.types.js';

export type { FlowControlConfig };
import { tryCompileExpression, type CompiledExpression } from './expression.compiler.js';
import { evaluate } from './expression.evaluator.js';

export const FLOW_CONTROL_LIMITS = {
  maxConcurrencyEntries: 2,
  /** A run's limit of one key, and a throttle's limit and burst. */
  maxLimit: 100_000,
  /** Throttle and debounce periods (one day). */
  maxPeriodSeconds: 24 * 3600,
  /** Priority is clamped to ±this many seconds. */
  maxPrioritySeconds: 600,
} as const;

/** A key expression compiled, or none (the one key `""`). */
export interface CompiledKey {
  readonly key?: CompiledExpression;
}

export interface CompiledFlowControl {
  readonly concurrency: readonly (CompiledKey & { readonly limit: number })[];
  readonly throttle?: CompiledKey & { readonly limit: number; readonly periodSeconds: number; readonly burst: number };
  readonly debounce?: CompiledKey & { readonly periodSeconds: number; readonly maxWaitSeconds?: number };
  /** A constant priority in seconds, or an expression evaluated per run. */
  readonly priority: number | CompiledExpression;
}

/** What one run's flow control evaluated to: the key values and its priority in seconds. */
export interface FlowControlValues {
  /** One key value per `concurrency` entry, in order. */
  readonly concurrencyKeys: readonly string[];
  readonly throttleKey?: string;
  readonly debounceKey?: string;
  /** Clamped to ±FLOW_CONTROL_LIMITS.maxPrioritySeconds. */
  readonly prioritySeconds: number;
}

const FIELDS = ['concurrency', 'throttle', 'debounce', 'priority'] as const;
const ENTRY_FIELDS = { concurrency: ['limit', 'key'], throttle: ['limit', 'periodSeconds', 'burst', 'key'], debounce: ['periodSeconds', 'maxWaitSeconds', 'key'] } as const;

/**
 * Checks and compiles the `flowControl` of the trigger of `graph`; every problem goes to `errors`
 * with a message naming the trigger (`workflow.trigger: flowControl.throttle.limit must be …`).
 * Returns undefined when the trigger has none or it has problems.
 */
export function compileFlowControl(graph: GraphName, raw: unknown, errors: DefinitionError[]): CompiledFlowControl | undefined {
  if (raw === undefined) return undefined;
  const problems = new FlowControlProblems(graph, errors);
  const before = errors.length;
  if (!isObject(raw)) {
    problems.add([], 'flowControl must be an object');
    return undefined;
  }
  problems.unknownFields(raw, FIELDS, []);
  const concurrency = compileConcurrency(raw['concurrency'], problems);
  const throttle = raw['throttle'] === undefined ? undefined : compileThrottle(raw['throttle'], problems);
  const debounce = raw['debounce'] === undefined ? undefined : compileDebounce(raw['debounce'], problems);
  const priority = compilePriority(raw['priority'], problems);
  if (errors.length > before || concurrency === undefined || priority === undefined) return undefined;
  return {
    concurrency,
    ...(throttle === undefined ? {} : { throttle }),
    ...(debounce === undefined ? {} : { debounce }),
    priority,
  };
}

/** Evaluates the keys and priority of one run over `{payload, input}`; a key that yields nothing is `""`. */
export async function evaluateFlowControl(compiled: CompiledFlowControl, scope: { payload: unknown; input?: unknown }): Promise<FlowControlValues> {
  const keyOf = async (entry: CompiledKey | undefined): Promise<string> => (entry?.key === undefined ? '' : keyText(await evaluateQuietly(entry.key, scope)));
  const concurrencyKeys = await Promise.all(compiled.concurrency.map(keyOf));
  const priority = typeof compiled.priority === 'number' ? compiled.priority : await evaluateQuietly(compiled.priority, scope);
  return {
    concurrencyKeys,
    ...(compiled.throttle === undefined ? {} : { throttleKey: await keyOf(compiled.throttle) }),
    ...(compiled.debounce === undefined ? {} : { debounceKey: await keyOf(compiled.debounce) }),
    prioritySeconds: clampPriority(priority),
  };
}

/** A computed priority: a finite number clamped to ±600 seconds; anything else is 0. */
export function clampPriority(value: unknown): number {
  if (typeof value !== 'number' || !Number.isFinite(value)) return 0;
  const max = FLOW_CONTROL_LIMITS.maxPrioritySeconds;
  return Math.min(max, Math.max(-max, value));
}

/**
 * An expression that fails at run time (a function given the wrong type) counts as yielding
 * nothing: the run still starts, under the key `""` or priority 0, rather than failing because
 * of its flow control.
 */
async function evaluateQuietly(expression: CompiledExpression, scope: { payload: unknown; input?: unknown }): Promise<unknown> {
  try {
    return await evaluate(expression, { payload: scope.payload, input: scope.input });
  } catch {
    return undefined;
  }
}

function keyText(value: unknown): string {
  if (value === undefined || value === null) return '';
  return typeof value === 'string' ? value : JSON.stringify(value);
}

class FlowControlProblems {
  constructor(
    private readonly graph: GraphName,
    private readonly errors: DefinitionError[],
  ) {}

  add(field: readonly (string | number)[], text: string): void {
    this.errors.push({ path: toPointer([this.graph, 'trigger', 'flowControl', ...field.map(String)]), graph: this.graph, message: `${this.graph}.trigger: ${text}` });
  }

  unknownFields(value: Record<string, unknown>, allowed: readonly string[], field: readonly (string | number)[]): void {
    for (const name of Object.keys(value)) {
      if (!allowed.includes(name)) this.add([...field, name], `${fieldName([...field, name])} is not a known field (allowed: ${allowed.join(', ')})`);
    }
  }

  /** An integer in [min, max]; undefined (and a problem) otherwise. */
  integer(value: unknown, field: readonly (string | number)[], min: number, max: number): number | undefined {
    if (typeof value !== 'number' || !Number.isInteger(value)) this.add(field, `${fieldName(field)} must be an integer between ${min} and ${max}`);
    else if (value < min || value > max) this.add(field, `${fieldName(field)} must be between ${min} and ${max} (got ${value})`);
    else return value;
    return undefined;
  }

  /** A number in (0, max]. */
  period(value: unknown, field: readonly (string | number)[]): number | undefined {
    const max = FLOW_CONTROL_LIMITS.maxPeriodSeconds;
    if (typeof value !== 'number' || !Number.isFinite(value)) this.add(field, `${fieldName(field)} must be a number of seconds`);
    else if (value <= 0 || value > max) this.add(field, `${fieldName(field)} must be above 0 and at most ${max} (got ${value})`);
    else return value;
    return undefined;
  }

  key(value: unknown, field: readonly (string | number)[]): CompiledKey {
    if (value === undefined) return {};
    if (typeof value !== 'string') {
      this.add(field, `${fieldName(field)} must be a JSONata expression (a string)`);
      return {};
    }
    const outcome = tryCompileExpression(value);
    if (outcome.ok) return { key: outcome.value };
    this.add(field, `${fieldName(field)} ${outcome.problem}`);
    return {};
  }
}

function compileConcurrency(raw: unknown, problems: FlowControlProblems): CompiledFlowControl['concurrency'] | undefined {
  if (raw === undefined) return [];
  if (!Array.isArray(raw)) {
    problems.add(['concurrency'], 'flowControl.concurrency must be an array');
    return undefined;
  }
  if (raw.length > FLOW_CONTROL_LIMITS.maxConcurrencyEntries) {
    problems.add(['concurrency'], `flowControl.concurrency has ${raw.length} entries; at most ${FLOW_CONTROL_LIMITS.maxConcurrencyEntries} are allowed`);
    return undefined;
  }
  return raw.map((entry: unknown, index) => {
    const field = ['concurrency', index];
    if (!isObject(entry)) {
      problems.add(field, `${fieldName(field)} must be an object`);
      return { limit: 1 };
    }
    problems.unknownFields(entry, ENTRY_FIELDS.concurrency, field);
    const limit = problems.integer(entry['limit'], [...field, 'limit'], 1, FLOW_CONTROL_LIMITS.maxLimit) ?? 1;
    return { limit, ...problems.key(entry['key'], [...field, 'key']) };
  });
}

function compileThrottle(raw: unknown, problems: FlowControlProblems): CompiledFlowControl['throttle'] {
  if (!isObject(raw)) {
    problems.add(['throttle'], 'flowControl.throttle must be an object');
    return undefined;
  }
  problems.unknownFields(raw, ENTRY_FIELDS.throttle, ['throttle']);
  const limit = problems.integer(raw['limit'], ['throttle', 'limit'], 1, FLOW_CONTROL_LIMITS.maxLimit);
  const periodSeconds = problems.period(raw['periodSeconds'], ['throttle', 'periodSeconds']);
  const burst = raw['burst'] === undefined ? 0 : problems.integer(raw['burst'], ['throttle', 'burst'], 0, FLOW_CONTROL_LIMITS.maxLimit);
  const key = problems.key(raw['key'], ['throttle', 'key']);
  if (limit === undefined || periodSeconds === undefined || burst === undefined) return undefined;
  return { limit, periodSeconds, burst, ...key };
}

function compileDebounce(raw: unknown, problems: FlowControlProblems): CompiledFlowControl['debounce'] {
  if (!isObject(raw)) {
    problems.add(['debounce'], 'flowControl.debounce must be an object');
    return undefined;
  }
  problems.unknownFields(raw, ENTRY_FIELDS.debounce, ['debounce']);
  const periodSeconds = problems.period(raw['periodSeconds'], ['debounce', 'periodSeconds']);
  const maxWaitSeconds = raw['maxWaitSeconds'] === undefined ? undefined : problems.period(raw['maxWaitSeconds'], ['debounce', 'maxWaitSeconds']);
  if (periodSeconds !== undefined && maxWaitSeconds !== undefined && maxWaitSeconds < periodSeconds) {
    problems.add(['debounce', 'maxWaitSeconds'], `flowControl.debounce.maxWaitSeconds must be at least periodSeconds (${periodSeconds})`);
  }
  const key = problems.key(raw['key'], ['debounce', 'key']);
  if (periodSeconds === undefined) return undefined;
  return { periodSeconds, ...(maxWaitSeconds === undefined ? {} : { maxWaitSeconds }), ...key };
}

function compilePriority(raw: unknown, problems: FlowControlProblems): number | CompiledExpression | undefined {
  if (raw === undefined) return 0;
  const max = FLOW_CONTROL_LIMITS.maxPrioritySeconds;
  const outOfRange = (value: number) => {
    problems.add(['priority'], `flowControl.priority must be between -${max} and ${max} seconds (got ${value})`);
    return undefined;
  };
  if (typeof raw === 'number') return Number.isFinite(raw) && Math.abs(raw) <= max ? raw : outOfRange(raw);
  if (typeof raw !== 'string') {
    problems.add(['priority'], 'flowControl.priority must be a number of seconds or a JSONata expression');
    return undefined;
  }
  const outcome = tryCompileExpression(raw);
  if (!outcome.ok) {
    problems.add(['priority'], `flowControl.priority ${outcome.problem}`);
    return undefined;
  }
  // A constant written as an expression ("900") is checked now, like a number.
  const constant = /^[-+]?\d+(\.\d+)?$/.test(outcome.value.source) ? Number(outcome.value.source) : undefined;
  if (constant !== undefined) return Math.abs(constant) <= max ? constant : outOfRange(constant);
  return outcome.value;
}

function fieldName(field: readonly (string | number)[]): string {
  let name = 'flowControl';
  for (const part of field) name += typeof part === 'number' ? `[${part}]` : `.${part}`;
  return name;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
