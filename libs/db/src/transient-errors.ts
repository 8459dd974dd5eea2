/**
 * Errors that say "the database could not do it right now", not "this statement is wrong": a
 * connection that was cut or could not be made, a server shutting down or starting, too many
 * connections, a serialization failure or deadlock. The same statement may well succeed a
 * moment later, so callers retry (with backoff: `retryTransient` in @runline/runtime) or answer
 * 503, and never end a run for it.
 *
 * SQLSTATE classes: 08 connection exception, 57P01-57P03 admin shutdown / crash shutdown /
 * cannot connect now, 53300 too many connections, 40001 serialization failure, 40P01 deadlock.
 */
const TRANSIENT_SQLSTATES = new Set(['57P01', '57P02', '57P03', '53300', '40001', '40P01']);
const TRANSIENT_NODE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'ENOTFOUND', 'EAI_AGAIN']);
const TRANSIENT_MESSAGES = [
  'Connection terminated',
  'terminating connection',
  'Client has encountered a connection error',
  'timeout exceeded when trying to connect',
  'Connection is not established',
  'Query read timeout',
];

export function isTransientDatabaseError(error: unknown): boolean {
  for (let current: unknown = error, depth = 0; current && depth < 5; depth++) {
    const candidate = current as { code?: unknown; message?: unknown; driverError?: unknown; cause?: unknown };
    const code = typeof candidate.code === 'string' ? candidate.code : '';
    if (code.startsWith('08') || TRANSIENT_SQLSTATES.has(code) || TRANSIENT_NODE_CODES.has(code)) return true;
    const message = typeof candidate.message === 'string' ? candidate.message : '';
    if (TRANSIENT_MESSAGES.some((text) => message.includes(text))) return true;
    // TypeORM wraps the driver's error (QueryFailedError.driverError).
    current = candidate.driverError ?? candidate.cause;
  }
  return false;
}
