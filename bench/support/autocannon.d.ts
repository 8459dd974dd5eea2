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
    title?: string;
    /** Return the raw result (encoded histograms) so several runs can be merged. */
    skipAggregateResult?: boolean;
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

  export interface Percentiles {
    average: number;
    min: number;
    max: number;
    p50: number;
    p90: number;
    p97_5: number;
    p99: number;
    p99_9: number;
  }

  /** Several raw results merged; latencies in milliseconds. */
  export interface AggregatedResult {
    latency: Percentiles & { totalCount: number };
    errors: number;
    timeouts: number;
    statusCodeStats: Record<string, { count: number }>;
  }

  export interface Instance extends EventEmitter {
    stop(): void;
  }

  interface Autocannon {
    (options: AutocannonOptions, done: (error: Error | null, result: RawResult) => void): Instance;
    aggregateResult(results: RawResult[], options?: Partial<AutocannonOptions>): AggregatedResult;
  }

  const autocannon: Autocannon;
  export default autocannon;
}
