import { ValidationPipe, type ValidationError } from '@nestjs/common';
import { ApiError } from './api-error.js';

/**
 * class-validator on every body and query, answering 400 with the first problem as a sentence
 * that names the field (`name must be a string`, `definition.nodes is required`).
 */
export function createValidationPipe(): ValidationPipe {
  return new ValidationPipe({
    transform: true,
    whitelist: false,
    forbidUnknownValues: false,
    validateCustomDecorators: false,
    exceptionFactory: (errors) => new ApiError(400, firstMessage(errors) ?? 'Invalid request body'),
  });
}

function firstMessage(errors: ValidationError[], path = ''): string | undefined {
  for (const error of errors) {
    const field = path ? `${path}.${error.property}` : error.property;
    const constraint = mostBasicProblem(error.constraints);
    // class-validator names only the leaf property; nested messages get the full path.
    if (constraint) return path ? constraint.replace(error.property, field) : constraint;
    const nested = firstMessage(error.children ?? [], field);
    if (nested) return nested;
  }
  return undefined;
}

/** "is required" before "must be a string" before "must be shorter than…": the first thing to fix. */
function mostBasicProblem(constraints: Record<string, string> | undefined): string | undefined {
  if (!constraints) return undefined;
  const rank = (key: string) => (key === 'isDefined' ? 0 : /^is[A-Z]/.test(key) ? 1 : 2);
  const [first] = Object.entries(constraints).sort(([a], [b]) => rank(a) - rank(b));
  return first?.[1];
}
