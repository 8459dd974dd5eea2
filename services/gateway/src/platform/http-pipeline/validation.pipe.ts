import { type ArgumentMetadata, Injectable, type PipeTransform, type ValidationError } from '@nestjs/common';
import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import { ApiError } from './api-error.js';

const NOT_VALIDATED: ReadonlySet<unknown> = new Set([String, Boolean, Number, Array, Object]);

/**
 * class-validator on every body, answering 400 with the first problem as a sentence that names
 * the field (`name must be a string`). Synchronous validation: no rule here is async, and the
 * external routes are on the hot path (bench/).
 */
@Injectable()
export class BodyValidationPipe implements PipeTransform {
  transform(value: unknown, metadata: ArgumentMetadata): unknown {
    const { metatype } = metadata;
    if (metadata.type !== 'body' || !metatype || NOT_VALIDATED.has(metatype)) return value;
    const instance = plainToInstance(metatype, value) as object;
    const errors = validateSync(instance, { forbidUnknownValues: false });
    if (errors.length > 0) throw new ApiError(400, firstMessage(errors) ?? 'Invalid request body');
    return instance;
  }
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
