/** A value that survives `JSON.stringify` / `JSON.parse` unchanged. */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

/** A value that cannot be kept in a run's JSON record (a function, a cycle, a BigInt). */
export class NotJsonError extends Error {
  constructor(what: string, reason: string) {
    super(`${what} is not a JSON value: ${reason}`);
    this.name = 'NotJsonError';
  }
}

/**
 * The JSON form of a value, or undefined when it has none (`undefined`, a function). Outcomes
 * are stored and resumed, so what goes into them must equal its own round trip; jsonata
 * sequences also carry extra properties that only the round trip sheds. It also detaches the
 * value from whatever produced it, so runs never share objects.
 */
export function toJsonValue(value: unknown, what: string): JsonValue | undefined {
  let text: string | undefined;
  try {
    text = JSON.stringify(value, withoutFunctions);
  } catch (error) {
    throw new NotJsonError(what, error instanceof Error ? error.message : String(error));
  }
  return text === undefined ? undefined : (JSON.parse(text) as JsonValue);
}

/**
 * jsonata hands back its functions (`$uppercase`, `function($x) { … }`) as plain objects
 * tagged `_jsonata_function` / `_jsonata_lambda`; like JS functions they have no JSON form.
 */
function withoutFunctions(_key: string, value: unknown): unknown {
  if (typeof value !== 'object' || value === null) return value;
  const tagged = value as { _jsonata_function?: unknown; _jsonata_lambda?: unknown };
  return tagged._jsonata_function === true || tagged._jsonata_lambda === true ? undefined : value;
}

/** Like `toJsonValue`, but nothing becomes null (a result, a response body). */
export function toJsonOrNull(value: unknown, what: string): JsonValue {
  return toJsonValue(value, what) ?? null;
}

/**
 * A fresh JSON object from the entries of `record` whose values have a JSON form. Built with
 * `Object.fromEntries`, so a `__proto__` key from a parsed body stays a plain key.
 */
export function toJsonRecord(record: Readonly<Record<string, unknown>> | undefined, what: string): Record<string, JsonValue> {
  const entries: [string, JsonValue][] = [];
  for (const [key, value] of Object.entries(record ?? {})) {
    const json = toJsonValue(value, `${what}.${key}`);
    if (json !== undefined) entries.push([key, json]);
  }
  return Object.fromEntries(entries);
}
