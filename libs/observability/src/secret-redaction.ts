/**
 * Secrets never reach the read model, the event stream or logs in clear. What a client can
 * read back (a run's requestPayload, result, trace, steps) passes through `redactSecrets`
 * first; documents that must not hold a secret at all (request templates) are refused when
 * `secretPathsOf` finds one. Both apply the same rules, so what one hides the other refuses.
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

/**
 * Where `redactSecrets` would hide something in `value`, as paths like `payload.items[0].apiKey`
 * (a key that is not a plain identifier is quoted: `headers["x-api-key"]`). Empty when nothing.
 */
export function secretPathsOf(value: unknown, root = ''): string[] {
  const paths: string[] = [];
  collectSecrets(value, root, 0, paths);
  return paths;
}

function collectSecrets(value: unknown, path: string, depth: number, paths: string[]): void {
  if (typeof value === 'string') {
    if (SECRET_VALUE.some((pattern) => pattern.test(value))) paths.push(path);
    return;
  }
  if (value === null || typeof value !== 'object') return;
  if (depth >= MAX_DEPTH) {
    paths.push(path);
    return;
  }
  if (Array.isArray(value)) {
    value.forEach((item, index) => collectSecrets(item, `${path}[${index}]`, depth + 1, paths));
    return;
  }
  for (const [key, item] of Object.entries(value)) {
    const itemPath = /^[A-Za-z_$][\w$]*$/.test(key) ? (path ? `${path}.${key}` : key) : `${path}[${JSON.stringify(key)}]`;
    if (isSecretName(key) && item !== null && item !== '') paths.push(itemPath);
    else collectSecrets(item, itemPath, depth + 1, paths);
  }
}

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
