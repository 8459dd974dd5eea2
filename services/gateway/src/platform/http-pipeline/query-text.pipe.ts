import { type ArgumentMetadata, Injectable, type PipeTransform } from '@nestjs/common';
import { ApiError } from './api-error.js';

export const QUERY_NUL_MESSAGE = 'Query parameters must not contain the NUL character (\\u0000)';

/**
 * Refuses a query parameter holding the NUL character (`%00`) with 400. PostgreSQL takes no NUL
 * in a text parameter, so a search (`q`), a filter (`source`) or a key (`pollKey`) holding one
 * would fail at the database as a 500. A pipe, so it runs after the guards: a missing or wrong
 * API token or console sign-in is still answered first.
 */
@Injectable()
export class QueryTextPipe implements PipeTransform {
  transform(value: unknown, metadata: ArgumentMetadata): unknown {
    if (metadata.type === 'query' && holdsNul(value)) throw new ApiError(400, QUERY_NUL_MESSAGE);
    return value;
  }
}

/** Query values are strings, arrays of strings (a repeated parameter) or an object of those. */
function holdsNul(value: unknown): boolean {
  if (typeof value === 'string') return value.includes('\0');
  if (Array.isArray(value)) return value.some(holdsNul);
  if (value !== null && typeof value === 'object') return Object.entries(value).some(([key, item]) => key.includes('\0') || holdsNul(item));
  return false;
}
