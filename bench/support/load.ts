import autocannon, { type RawResult } from 'autocannon';

/** One target: the request to repeat and the status that counts as the expected answer. */
export interface LoadTarget {
  label: string;
  url: string;
  method: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: string;
  expectedStatus: number;
}

/** The same for every target, so the comparison is fair. */
export interface LoadSettings {
  connections: number;
  pipelining: number;
  /** Seconds. */
  duration: number;
}

export interface LoadSummary {
  /** Expected answers per second (other statuses and errors are not counted). */
  requestsPerSecond: number;
  latencyMs: { mean: number; p50: number; p99: number };
  expected: number;
  /** Status code -> count, for every status but the expected one. */
  unexpected: Record<string, number>;
  errors: number;
  timeouts: number;
  seconds: number;
}

/** Runs autocannon once from this process; the raw result can be merged with others. */
export function runLoad(target: LoadTarget, settings: LoadSettings): Promise<RawResult> {
  return new Promise((resolve, reject) => {
    autocannon(
      {
        url: target.url,
        method: target.method,
        headers: target.headers,
        body: target.body,
        connections: settings.connections,
        pipelining: settings.pipelining,
        duration: settings.duration,
        skipAggregateResult: true,
      },
      (error, result) => (error ? reject(error) : resolve(result)),
    );
  });
}

/** Merges rounds: counts add up, latency percentiles come from the merged histogram. */
export function summarize(target: LoadTarget, results: RawResult[]): LoadSummary {
  // aggregateResult adds later counts into the first result's objects: give it copies.
  const copies = results.map((result) => ({ ...result, statusCodeStats: structuredClone(result.statusCodeStats) }));
  const merged = autocannon.aggregateResult(copies, { url: target.url });
  const seconds = results.reduce((sum, result) => sum + result.duration, 0);
  const unexpected: Record<string, number> = {};
  let expected = 0;
  for (const [status, { count }] of Object.entries(merged.statusCodeStats)) {
    if (Number(status) === target.expectedStatus) expected += count;
    else unexpected[status] = count;
  }
  return {
    requestsPerSecond: seconds > 0 ? expected / seconds : 0,
    latencyMs: { mean: merged.latency.average, p50: merged.latency.p50, p99: merged.latency.p99 },
    expected,
    unexpected,
    errors: merged.errors,
    timeouts: merged.timeouts,
    seconds,
  };
}

/** True when every answer had the expected status and nothing failed. */
export function isClean(summary: LoadSummary): boolean {
  return Object.keys(summary.unexpected).length === 0 && summary.errors === 0 && summary.timeouts === 0 && summary.expected > 0;
}
