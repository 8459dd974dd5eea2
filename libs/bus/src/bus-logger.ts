/**
 * Where a bus reports trouble it cannot hand back to a caller (a consumer loop that failed, an
 * ack that did not reach the server, a handler that threw). Shaped like pino's
 * `logger.warn(obj, msg)`, so a pino logger fits as is. Implementations log subjects, stream
 * and consumer names, ids and error messages, never message data or headers.
 */
export interface BusLogger {
  warn(obj: Record<string, unknown>, msg: string): void;
  error(obj: Record<string, unknown>, msg: string): void;
}

/** Message of whatever a handler threw, without its stack or any attached data. */
export function errorMessage(err: unknown): string {
  if (err instanceof Error) return err.message;
  if (typeof err === 'string') return err;
  if (typeof err === 'object' && err !== null && 'message' in err && typeof err.message === 'string') {
    return err.message;
  }
  return 'handler failed';
}
