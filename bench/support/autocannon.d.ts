// The slice of autocannon 8's API the benchmark uses (the package ships no typings).
declare module 'autocannon' {
  import type { EventEmitter } from 'node:events';

  export interface AutocannonOptions {
    url: string;
    method?: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
    headers?: Record<string, string>;
    body?: string;
    connections?: number;
    pipelining?: number;
    /** Seconds. */
    duration?: number;
    /**
     * Requests per second over all connections: a quota per one-second tick, which each
     * connection sends back to back before it waits for the next tick.
     */
    overallRate?: number;
    title?: string;
    /**
     * Requests to cycle through; a `setupRequest` is called before each request is sent and
     * returns what to send (the first one is built when a connection starts).
     */
    requests?: Array<{ setupRequest?: (request: RequestParts) => RequestParts }>;
    /** Return the raw result: the benchmark merges rounds itself and needs no aggregation. */
    skipAggregateResult?: boolean;
  }

  export interface RequestParts {
    method?: string;
    path?: string;
    headers?: Record<string, string>;
    body?: string | Buffer;
  }

  /** A run's result with `skipAggregateResult`: histograms are still encoded. */
  export interface RawResult {
    totalCompletedRequests: number;
    totalRequests: number;
    errors: number;
    timeouts: number;
    resets: number;
    non2xx: number;
    statusCodeStats: Record<string, { count: number }>;
    /** Seconds the run took. */
    duration: number;
  }

  export interface Instance extends EventEmitter {
    stop(): void;
    /** Every answer, whatever its status; the time is in milliseconds with fractions. */
    on(event: 'response', listener: (client: unknown, statusCode: number, bytes: number, responseTimeMs: number) => void): this;
  }

  interface Autocannon {
    (options: AutocannonOptions, done: (error: Error | null, result: RawResult) => void): Instance;
  }

  const autocannon: Autocannon;
  export default autocannon;
}
