/**
 * The rows of an `UPDATE … RETURNING` or `DELETE … RETURNING` run through TypeORM's
 * `query()`: on pg it answers `[rows, affectedCount]` for those, and plain rows for SELECT
 * and INSERT.
 */
export function returningRows<T>(result: unknown): T[] {
  return (Array.isArray(result) && Array.isArray(result[0]) ? result[0] : result) as T[];
}
