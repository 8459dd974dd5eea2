import { describeJsonataError, type CompiledExpression, type CompiledTemplate } from './expression.compiler.js';

/** What expressions see: `payload.orderId`, `vars.total`, `session.x`, `input.message`. */
export interface EvaluationScope {
  readonly payload?: unknown;
  readonly vars?: unknown;
  readonly session?: unknown;
  readonly input?: unknown;
}

/** An expression failed while running (bad function argument, guard tripped, ...). */
export class ExpressionEvaluationError extends Error {
  constructor(
    readonly source: string,
    /** jsonata's error code, e.g. `T2001`, or `D1012` for the time guard. */
    readonly code: string | undefined,
    reason: string,
  ) {
    super(`expression ${JSON.stringify(source)} failed: ${reason}`);
    this.name = 'ExpressionEvaluationError';
  }
}

/** Evaluates a compiled expression against a scope; `undefined` when it selects nothing. */
export async function evaluate(expression: CompiledExpression, scope: EvaluationScope): Promise<unknown> {
  const input = { payload: scope.payload, vars: scope.vars, session: scope.session, input: scope.input };
  try {
    // jsonata (2.x) binds `$` in a fresh frame per evaluation, so concurrent runs sharing one
    // compiled expression never see each other's input; a spec pins this across upgrades.
    return await expression.program.evaluate(input, {});
  } catch (error) {
    throw new ExpressionEvaluationError(expression.source, errorCode(error), describeJsonataError(error));
  }
}

/**
 * Renders a template: literal parts as written, expression parts as text. Strings are inserted
 * as they are; numbers and booleans via String(); objects and arrays as JSON; null, undefined
 * and functions as nothing.
 */
export async function renderTemplate(template: CompiledTemplate, scope: EvaluationScope): Promise<string> {
  let text = '';
  for (const part of template.parts) {
    text += part.kind === 'text' ? part.text : stringify(await evaluate(part.expression, scope));
  }
  return text;
}

function stringify(value: unknown): string {
  if (value === undefined || value === null || typeof value === 'function' || isJsonataFunction(value)) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return String(value);
  return JSON.stringify(value) ?? '';
}

/** JSONata hands back its functions (`$uppercase`, lambdas) as tagged objects, not JS functions. */
function isJsonataFunction(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return false;
  const tagged = value as { _jsonata_function?: unknown; _jsonata_lambda?: unknown };
  return tagged._jsonata_function === true || tagged._jsonata_lambda === true;
}

function errorCode(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const { code } = error as { code?: unknown };
  return typeof code === 'string' ? code : undefined;
}
