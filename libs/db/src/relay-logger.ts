/**
 * Where the outbox relay reports trouble nobody awaits (a publish that failed, a batch that
 * could not be claimed). Shaped like pino's `logger.warn(obj, msg)`, so a pino logger fits
 * as is. The relay logs ids, subjects and error messages, never message data or headers.
 */
export interface OutboxRelayLogger {
  warn(obj: Record<string, unknown>, msg: string): void;
  error(obj: Record<string, unknown>, msg: string): void;
}

export const consoleRelayLogger: OutboxRelayLogger = {
  warn: (obj, msg) => console.warn(msg, obj),
  error: (obj, msg) => console.error(msg, obj),
};

/** The message of whatever was thrown, without stack or attached data. */
export function errorMessage(error: unknown): string {
  if (error instanceof Error) return error.message;
  if (typeof error === 'string') return error;
  return 'unknown error';
}
