/**
 * Secrets never reach the read model, the event stream or logs in clear. What a client can
 * read back (requestPayload, result, trace, steps) passes through `redactSecrets` first.
 */
export const REDACTED = '[REDACTED]';

/**
 * Field names that hold secrets, compared lower-case with `-` and `_` removed: `webhookSecret`,
 * `client_secret`, `x-api-key`, `accessToken`, `Authorization`, `password`, `apiKey`, …
 * Deliberately broad: hiding a harmless `tokenCount` costs less than showing a credential.
 */
const SECRET_NAME = /secret|token|passw|pwd|apikey|authorization|cookie|credential|privatekey|accesskey|signature/;

/** Values that are credentials whatever their field is called. */
const SECRET_VALUE = [/^\s*(bearer|basic)\s+\S/i, /\b[a-z][a-z0-9]{0,15}_ext_[A-Za-z0-9]{16,}/];

export function isSecretName(name: string): boolean {
  return SECRET_NAME.test(name.toLowerCase().replace(/[-_]/g, ''));
}

/** A deep copy of `value` with secret fields and credential-like strings replaced by `[REDACTED]`. */
export function redactSecrets<T>(value: T): T {
  return redact(value, 0) as T;
}

const MAX_DEPTH = 64;

function redact(value: unknown, depth: number): unknown {
  if (typeof value === 'string') return SECRET_VALUE.some((pattern) => pattern.test(value)) ? REDACTED : value;
  if (value === null || typeof value !== 'object') return value;
  if (depth >= MAX_DEPTH) return REDACTED;
  if (Array.isArray(value)) return value.map((item) => redact(item, depth + 1));
  const copy: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    copy[key] = isSecretName(key) && item !== null && item !== '' ? REDACTED : redact(item, depth + 1);
  }
  return copy;
}
