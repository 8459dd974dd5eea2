/**
 * Logging, metrics and request correlation shared by every service.
 * - `createLogger`: pino JSON logs with secrets redacted; `NestPinoLogger` adapts it for Nest.
 * - `createMetricsRegistry` / `httpMetricsMiddleware`: prom-client, one registry per service.
 * - `requestIdMiddleware`: an `x-request-id` on every response.
 */
export { createLogger, NestPinoLogger, type Logger, type LoggerOptions } from './logger.js';
export { accessLogMiddleware } from './access-log.js';
export { createMetricsRegistry, httpMetricsMiddleware } from './metrics.js';
export { REQUEST_ID_HEADER, requestIdMiddleware } from './request-id.js';
