/**
 * How a service runs: the `ServiceDefinition` each service exports, `startService` (one
 * service on a given database and bus), `migrateServices` (the explicit migration step),
 * `runStandalone` (a service as its own process), config validation at boot, and the tokens
 * under which the runtime hands infrastructure to service modules, and `FireTimer`, the one armed
 * timer for the earliest due item of a service that fires things on time.
 *
 * `retry` is the one way code retries in process: on p-retry, with an exponential backoff and
 * jitter, a limit on tries, a deadline, a predicate for what is worth another try, the wait the
 * other side asked for (Retry-After) and an AbortSignal. `retryTransient` is its policy for
 * transient database errors (`isTransientDatabaseError` of @runline/db).
 *
 * `projectorOf` makes the controller that feeds a service's `Projection` (its copies of another
 * service's data) from the bus: one durable subscription per subject, each event to `apply`.
 *
 * `boundedCache` is the one in-memory cache: an lru-cache `LRUCache` with at most so many
 * entries (the least recently used goes first) and, when given, a TTL.
 */
export { ConfigError, IsBusPrefix, IsCidrList, IsNatsUrl, IsPort, IsPostgresUrl, IsStreamReplicas, loadConfig, parseCidrList } from './config.js';
export { SecretBox } from './secret-box.js';
export { retry, SYSTEM_RETRY_CLOCK, type RetryClock, type RetryOptions } from './retry.js';
export { retryTransient, type TransientRetryOptions } from './transient-retry.js';
export { boundedCache, type BoundedCache, type BoundedCacheOptions } from './bounded-cache.js';
export { PassLoop } from './pass-loop.js';
export { BatchPruner, type BatchPrunerOptions } from './batch-pruner.js';
export { InvalidCommandError, readCommandOrTerminate } from './command-reading.js';
export { instanceIdentity } from './process-identity.js';
export { CONTENDED_RETRY_MS, FireTimer, MAX_TIMER_DELAY_MS, systemTimers, type TimerPort } from './fire-timer.js';
export { HealthController } from './health.controller.js';
export { projectorOf, type Projection } from './projection.projector.js';
export { runStandalone } from './run-standalone.js';
export { RuntimeModule, type RuntimeResources } from './runtime.module.js';
export type { ServiceDefinition } from './service-definition.js';
export { migrateServices, startService, type RunningService, type ServiceStartOptions } from './start-service.js';
export { ENVIRONMENT, LOGGER, METRICS_REGISTRY, SERVICE_NAME } from './tokens.js';
