/** Injection tokens the runtime provides to every service module. */
export const SERVICE_NAME = 'RUNLINE_SERVICE_NAME';
export const LOGGER = 'RUNLINE_LOGGER';
export const METRICS_REGISTRY = 'RUNLINE_METRICS_REGISTRY';
/** The environment the service was started with (validated by each service's own config). */
export const ENVIRONMENT = 'RUNLINE_ENVIRONMENT';
