/**
 * A UUID as text: 8-4-4-4-12 hexadecimal digits, of any version and variant (ids are made by
 * PostgreSQL's gen_random_uuid() and node's randomUUID(), hook delivery keys are version 8).
 * Lower case, as PostgreSQL and randomUUID() write it; for composing a stricter pattern (a cursor
 * the service wrote itself) that takes only what the service writes.
 */
export const UUID_TEXT = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}';

/**
 * A whole value that is a UUID, in either case: RFC 9562 lets a UUID be written in upper case on
 * input, and a uuid column takes it as the same id.
 */
const UUID_PATTERN = new RegExp(`^${UUID_TEXT}$`, 'i');

/**
 * Whether `value` is a UUID (either case, any version). Ids are UUIDs: anything else names
 * nothing that can exist, so it answers "not found" without a query, and never reaches a uuid
 * column, where PostgreSQL would refuse it with an error.
 */
export function isUuid(value: string | null | undefined): value is string {
  return typeof value === 'string' && UUID_PATTERN.test(value);
}
