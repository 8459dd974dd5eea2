import type { LoggerService } from '@nestjs/common';
import { pino, type DestinationStream, type Logger } from 'pino';
import { traceFields } from './tracing.js';

export type { Logger } from 'pino';

/**
 * Paths that must never reach a log line. Tokens, secrets and authorization headers are
 * replaced wherever a request, payload or error object is logged.
 */
const REDACTED_PATHS = [
  'authorization',
  'password',
  'secret',
  'token',
  'apiKey',
  'headers.authorization',
  'headers["x-api-key"]',
  'headers.cookie',
  'req.headers.authorization',
  'req.headers["x-api-key"]',
  '*.authorization',
  '*.password',
  '*.secret',
  '*.token',
  '*.apiKey',
  '*.webhookSecret',
  '*.defaultCallbackSecret',
  '*.authHeader',
];

export interface LoggerOptions {
  service: string;
  level?: string;
  /** Where lines go; tests pass a stream to inspect them, `npm start` a file and the terminal. Default: stdout. */
  destination?: DestinationStream;
}

/** A JSON logger for one service, with secret redaction built in and the active trace's ids on each line. */
export function createLogger({ service, level, destination }: LoggerOptions): Logger {
  const options = {
    level: level ?? process.env.LOG_LEVEL ?? 'info',
    base: { service },
    redact: { paths: REDACTED_PATHS, censor: '[REDACTED]' },
    // A line written inside a span names its trace: `traceId`, `spanId`.
    mixin: traceFields,
  };
  return destination ? pino(options, destination) : pino(options);
}

/** Routes Nest's own log calls (bootstrap, route mapping, exceptions) into pino. */
export class NestPinoLogger implements LoggerService {
  constructor(private readonly logger: Logger) {}

  log(message: unknown, context?: string): void {
    this.logger.info({ context }, String(message));
  }
  error(message: unknown, trace?: string, context?: string): void {
    this.logger.error({ context, trace }, String(message));
  }
  warn(message: unknown, context?: string): void {
    this.logger.warn({ context }, String(message));
  }
  debug(message: unknown, context?: string): void {
    this.logger.debug({ context }, String(message));
  }
  verbose(message: unknown, context?: string): void {
    this.logger.trace({ context }, String(message));
  }
}
