import autocannon, { type RawResult } from 'autocannon';

/** One target: the request to repeat and the status that counts as the expected answer. */
export interface LoadTarget {
  label: string;
  url: string;
  method: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: string;
  expectedStatus: number;
  /**
   * When set, each request takes its headers and body from here instead (a delivery signed
   * ahead of the load with its own id); `headers` and `body` are then only the defaults.
   */
  nextRequest?: () => { headers: Record<string, string>; body: string };
}

/** The same for every target, so the comparison is fair. */
export interface LoadSettings {
  connections: number;
  pipelining: number;
  /** Seconds. */
  duration: number;
}

/** One autocannon run: its counts, and the latency of every expected answer. */
export interface LoadRun {
  raw: RawResult;
  /**
   * Milliseconds with fractions. autocannon's own histogram keeps whole milliseconds, which
   * cannot tell a 0.4 ms answer from a 0.9 ms one; a budget of a few milliseconds needs better.
   */
  latenciesMs: number[];
}

export interface LoadSummary {
  /** Expected answers per second (other statuses and errors are not counted). */
  requestsPerSecond: number;
  /** Of the expected answers only. */
  latencyMs: { mean: number; p50: number; p99: number };
  expected: number;
  /** Status code -> count, for every status but the expected one. */
  unexpected: Record<string, number>;
  errors: number;
  timeouts: number;
  seconds: number;
}

/** Runs autocannon once from this process; runs of the same target can be merged. */
export function runLoad(target: LoadTarget, settings: LoadSettings): Promise<LoadRun> {
  const latenciesMs: number[] = [];
  return new Promise((resolve, reject) => {
    const instance = autocannon(
      {
        url: target.url,
        method: target.method,
        headers: target.headers,
        body: target.body,
        connections: settings.connections,
        pipelining: settings.pipelining,
        duration: settings.duration,
        skipAggregateResult: true,
        ...(target.nextRequest ? { requests: [{ setupRequest: (request) => ({ ...request, ...target.nextRequest!() }) }] } : {}),
      },
      (error, raw) => (error ? reject(error) : resolve({ raw, latenciesMs })),
    );
    instance.on('response', (_client, statusCode, _bytes, responseTimeMs) => {
      if (statusCode === target.expectedStatus) latenciesMs.push(responseTimeMs);
    });
  });
}

/** Merges rounds: counts add up, latency percentiles come from all samples together. */
export function summarize(target: LoadTarget, runs: LoadRun[]): LoadSummary {
  const unexpected: Record<string, number> = {};
  let expected = 0;
  let errors = 0;
  let timeouts = 0;
  let seconds = 0;
  for (const { raw } of runs) {
    for (const [status, { count }] of Object.entries(raw.statusCodeStats)) {
      if (Number(status) === target.expectedStatus) expected += count;
      else unexpected[status] = (unexpected[status] ?? 0) + count;
    }
    errors += raw.errors;
    timeouts += raw.timeouts;
    seconds += raw.duration;
  }
  const latencies = Float64Array.from(runs.flatMap((run) => run.latenciesMs)).sort();
  return {
    requestsPerSecond: seconds > 0 ? expected / seconds : 0,
    latencyMs: { mean: mean(latencies), p50: percentile(latencies, 0.5), p99: percentile(latencies, 0.99) },
    expected,
    unexpected,
    errors,
    timeouts,
    seconds,
  };
}

/** True when every answer had the expected status and nothing failed. */
export function isClean(summary: LoadSummary): boolean {
  return Object.keys(summary.unexpected).length === 0 && summary.errors === 0 && summary.timeouts === 0 && summary.expected > 0;
}

/** Nearest rank, as HDR histograms (and so autocannon) report it. */
function percentile(sorted: Float64Array, fraction: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.max(0, Math.ceil(fraction * sorted.length) - 1)] ?? Number.NaN;
}

function mean(values: Float64Array): number {
  if (values.length === 0) return Number.NaN;
  let sum = 0;
  for (const value of values) sum += value;
  return sum / values.length;
}
