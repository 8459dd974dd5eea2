import type { TransientRetryOptions } from '@runline/runtime';

/**
 * The reads on a delivery's path (a hook for the gateway's copy, a hook or subscription to
 * verify) are retried through a passing database outage (a cut connection, a restart) instead
 * of failing the request, which the gateway could only answer with a 500. A longer outage
 * outlasts the gateway's request deadline, which then answers 503 `Webhook service
 * unavailable, retry shortly`: the sender retries and nothing was recorded.
 */
export const DELIVERY_READ_RETRY: TransientRetryOptions = { maxElapsedMs: 10_000 };
