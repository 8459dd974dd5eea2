import jsonata from 'jsonata';

import { EXPRESSION_GUARDS } from './definition.limits.js';

/** What a compiled JSONata program offers; kept narrow so jsonata's types stay internal. */
export interface ExpressionProgram {
  evaluate(input: unknown, bindings: Record<string, unknown>): Promise<unknown>;
}

/** A JSONata expression compiled once; reusable across runs and safe to evaluate concurrently. */
export interface CompiledExpression {
  readonly kind: 'expression';
  /** The expression as written (trimmed). */
  readonly source: string;
  readonly program: ExpressionProgram;
}

/** A literal piece of a template, or a compiled `{{ expression }}`. */
export type TemplatePart =
  | { readonly kind: 'text'; readonly text: string }
  | { readonly kind: 'expression'; readonly expression: CompiledExpression };

/** A template split into parts once, with every `{{ expression }}` compiled. */
export interface CompiledTemplate {
  readonly kind: 'template';
  readonly source: string;
  readonly parts: readonly TemplatePart[];
}

/** The outcome of compiling one source: the compiled value or a problem phrased for messages. */
export type CompileOutcome<T> =
  | { readonly ok: true; readonly value: T }
  | { readonly ok: false; readonly problem: string };

/** Thrown by `compileExpression` and `compileTemplate` on a syntax error. */
export class ExpressionSyntaxError extends Error {
  constructor(
    readonly source: string,
    problem: string,
  ) {
    super(`${JSON.stringify(source)} ${problem}`);
    this.name = 'ExpressionSyntaxError';
  }
}

/**
 * Compiles a JSONata expression. `problem` reads after a field name:
 * `value` + ` is not a valid expression: Unexpected end of expression (at position 8)`.
 */
export function tryCompileExpression(source: string): CompileOutcome<CompiledExpression> {
  const trimmed = source.trim();
  if (trimmed === '') return { ok: false, problem: 'is empty; an expression is required' };
  try {
    const program = jsonata(trimmed, {
      timeout: EXPRESSION_GUARDS.timeoutMs,
      stack: EXPRESSION_GUARDS.maxDepth,
      sequence: EXPRESSION_GUARDS.maxSequenceLength,
    });
    return { ok: true, value: { kind: 'expression', source: trimmed, program } };
  } catch (error) {
    return { ok: false, problem: `is not a valid expression: ${describeJsonataError(error)}` };
  }
}

/**
 * Splits a template at its `{{ expression }}` parts and compiles each. Braces and quotes inside
 * an expression are balanced, so `{{ { 'a': 1 } }}` and `{{ '}}' }}` work; a literal `{{` is
 * written as `{{ '{{' }}`.
 */
export function tryCompileTemplate(source: string): CompileOutcome<CompiledTemplate> {
  const parts: TemplatePart[] = [];
  let cursor = 0;
  while (cursor < source.length) {
    const open = source.indexOf('{{', cursor);
    if (open === -1) break;
    if (open > cursor) parts.push({ kind: 'text', text: source.slice(cursor, open) });
    const close = findClosingBraces(source, open + 2);
    if (close === -1) {
      return { ok: false, problem: `is not a valid template: unterminated "{{" at position ${open}` };
    }
    const inner = source.slice(open + 2, close);
    if (inner.trim() === '') {
      return { ok: false, problem: `is not a valid template: empty "{{ }}" at position ${open}` };
    }
    const compiled = tryCompileExpression(inner);
    if (!compiled.ok) {
      return { ok: false, problem: `is not a valid template: {{${inner}}} ${compiled.problem}` };
    }
    parts.push({ kind: 'expression', expression: compiled.value });
    cursor = close + 2;
  }
  if (cursor < source.length) parts.push({ kind: 'text', text: source.slice(cursor) });
  return { ok: true, value: { kind: 'template', source, parts } };
}

export function compileExpression(source: string): CompiledExpression {
  const outcome = tryCompileExpression(source);
  if (!outcome.ok) throw new ExpressionSyntaxError(source, outcome.problem);
  return outcome.value;
}

export function compileTemplate(source: string): CompiledTemplate {
  const outcome = tryCompileTemplate(source);
  if (!outcome.ok) throw new ExpressionSyntaxError(source, outcome.problem);
  return outcome.value;
}

/** True when the template has no expressions, so it renders to the same text every time. */
export function isStaticTemplate(template: CompiledTemplate): boolean {
  return template.parts.every((part) => part.kind === 'text');
}

/**
 * Index of the `}}` that closes an expression starting at `from`, or -1. Skips string literals,
 * backtick names and comments, and braces of object constructors nested in the expression.
 */
function findClosingBraces(source: string, from: number): number {
  let depth = 0;
  for (let index = from; index < source.length; index += 1) {
    const char = source[index];
    if (char === '"' || char === "'" || char === '`') {
      index = skipQuoted(source, index, char);
      if (index === -1) return -1;
    } else if (char === '/' && source[index + 1] === '*') {
      const end = source.indexOf('*/', index + 2);
      if (end === -1) return -1;
      index = end + 1;
    } else if (char === '{') {
      depth += 1;
    } else if (char === '}') {
      if (depth === 0 && source[index + 1] === '}') return index;
      if (depth > 0) depth -= 1;
    }
  }
  return -1;
}

/** Index of the quote closing the literal opened at `start`, or -1. Backtick names have no escapes. */
function skipQuoted(source: string, start: number, quote: string): number {
  for (let index = start + 1; index < source.length; index += 1) {
    const char = source[index];
    if (char === '\\' && quote !== '`') index += 1;
    else if (char === quote) return index;
  }
  return -1;
}

/** jsonata throws plain objects `{ code, position, token, message }`, not Errors. */
export function describeJsonataError(error: unknown): string {
  if (typeof error !== 'object' || error === null) return String(error);
  const { message, position } = error as { message?: unknown; position?: unknown };
  const text = typeof message === 'string' && message !== '' ? message : 'syntax error';
  return typeof position === 'number' ? `${text} (at position ${position})` : text;
}
