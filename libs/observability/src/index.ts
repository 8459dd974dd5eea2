/**
 * Logging, metrics and request correlation shared by every service.
 * - `createLogger`: pino JSON logs with secrets redacted; `NestPinoLogger` adapts it for Nest.
 * - `createMetricsRegistry`: prom-client, one registry per service.
 * - `instrumentHttp` / `requestIdFor`: request ids on every response, HTTP metrics, access log.
 * - `startTracing` / `inSpan` / `currentTraceparent` / `tracedServerFactory`: OpenTelemetry, set
 *   up once per process; spans around HTTP requests and our own work; trace ids in log lines.
 * - `redactSecrets` / `secretPathsOf`: the one rule for what counts as a secret in a document a
 *   client reads back (run payloads and results, request templates).
 */
export { instrumentHttp, REQUEST_ID_HEADER, requestIdFor } from './http-instrumentation.js';
export { createLogger, NestPinoLogger, type Logger, type LoggerOptions } from './logger.js';
export { createMetricsRegistry } from './metrics.js';
export { isSecretName, REDACTED, redactSecrets, secretPathsOf } from './secret-redaction.js';
export { nameServerSpan, tracedServerFactory } from './http-tracing.js';
export {
  contextOf,
  currentTraceparent,
  inSpan,
  SERVICE_ATTRIBUTE,
  SpanKind,
  startTracing,
  traceFields,
  TRACER_NAME,
  type SpanOptions,
  type Tracing,
  type TracingOptions,
} from './tracing.js';
