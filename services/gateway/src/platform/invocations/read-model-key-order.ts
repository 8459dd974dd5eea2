/**
 * `value` with every object's keys in the order the invocation read model gives them back: it
 * is a PostgreSQL `jsonb` column, which keeps an object's keys shorter first (in UTF-8 bytes),
 * then bytewise. A run's result made elsewhere (from its final event, from an inline run's
 * StartInvocation reply) reads the same as GET then, byte for byte. Arrays keep their order.
 */
export function inReadModelKeyOrder(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(inReadModelKeyOrder);
  if (value === null || typeof value !== 'object') return value;
  const entries = Object.entries(value).sort(([a], [b]) => compareJsonbKeys(a, b));
  // fromEntries defines each key as an own property: a `__proto__` key stays a key.
  return Object.fromEntries(entries.map(([key, field]) => [key, inReadModelKeyOrder(field)]));
}

function compareJsonbKeys(a: string, b: string): number {
  const lengths = Buffer.byteLength(a) - Buffer.byteLength(b);
  return lengths !== 0 ? lengths : Buffer.compare(Buffer.from(a), Buffer.from(b));
}
