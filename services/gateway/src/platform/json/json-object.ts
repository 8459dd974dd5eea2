import secureJson from 'secure-json-parse';

// The JSON rules every body obeys, with no HTTP in them: the body parser (http-pipeline) and an
// inbound hook's delivery (a handler) both read bodies through them.

/**
 * Deepest nesting of objects and arrays a body may have. Real payloads stay far below; the
 * limit keeps every later walk of the body (validation, redaction, expressions) from running
 * out of stack on a body built to do exactly that.
 */
export const MAX_BODY_DEPTH = 64;

export const BODY_ERRORS = {
  notJson: 'Request body must be valid JSON',
  notObject: 'Request body must be a JSON object',
  tooDeep: `Request body is nested too deeply (at most ${MAX_BODY_DEPTH} levels)`,
  nul: 'Request body must not contain the NUL character (\\u0000)',
  notJsonType: 'Request body must be JSON (Content-Type: application/json)',
} as const;

/**
 * A JSON body's text as an object, or the 400 message of the first rule it breaks, in this order:
 * nested deeper than MAX_BODY_DEPTH (one pass over the text, before anything parses or walks
 * it), not JSON, not an object, holding a NUL. `__proto__` and `constructor.prototype` keys are
 * dropped. The one place for these rules: every route's body and an inbound hook's delivery.
 */
export function parseJsonObject(text: string): { value: Record<string, unknown> } | { error: string } {
  if (nestingDepthExceeds(text, MAX_BODY_DEPTH)) return { error: BODY_ERRORS.tooDeep };
  let parsed: unknown;
  try {
    parsed = secureJson.parse(text, undefined, { protoAction: 'remove', constructorAction: 'remove' });
  } catch {
    return { error: BODY_ERRORS.notJson };
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) return { error: BODY_ERRORS.notObject };
  if (containsNul(text)) return { error: BODY_ERRORS.nul };
  return { value: parsed as Record<string, unknown> };
}

/**
 * Whether valid JSON `text` holds a NUL character anywhere (in a key or a string). PostgreSQL
 * stores no NUL in `text` or `jsonb`, so such a body would fail where it is written, long after
 * the request was checked: it is refused here. Raw control characters are not valid JSON, so
 * only the escape `\u0000` can bring one (not `\\u0000`, an escaped backslash before `u0000`).
 */
export function containsNul(text: string): boolean {
  return /(?<!\\)(?:\\\\)*\\u0000/.test(text);
}

/**
 * Whether `{`/`[` nest deeper than `limit` anywhere in `text`, counting outside strings only.
 * One pass, no recursion, so no body can make this overflow the stack.
 */
export function nestingDepthExceeds(text: string, limit: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) {
      if (++depth > limit) return true;
    } else if (c === 0x7d || c === 0x5d) depth--;
  }
  return false;
}
