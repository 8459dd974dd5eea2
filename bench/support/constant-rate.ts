import autocannon from 'autocannon';
import { setTimeout as sleep } from 'node:timers/promises';
import type { LoadTarget } from './load.js';

/** What one constant-rate load left: counts, and the latency of every expected answer. */
export interface RateRun {
  /** Requests per second asked for. */
  rate: number;
  /** From the first lane's start to the last lane's end. */
  seconds: number;
  expected: number;
  /** Status code -> count, for every status but the expected one. */
  unexpected: Record<string, number>;
  errors: number;
  timeouts: number;
  /** Expected answers, milliseconds with fractions, sorted. */
  latenciesMs: Float64Array;
  /** p99 of the expected answers of each WINDOW_SECONDS of the run, in order. */
  windowP99Ms: number[];
  /** Connections over all lanes: at most this many requests were in flight when the load stopped, unanswered. */
  connections: number;
}

export const WINDOW_SECONDS = 10;
/** Lanes start this far apart, so each second's requests go out in LANES groups, not one. */
const LANES = 20;
/**
 * At most this many requests per second on one connection (one request in flight at a time):
 * a lane keeps its rate while the mean answer takes under 1/PER_CONNECTION_RATE s (100 ms), so
 * the load generator is not what limits a system answering slower than the 25 ms p99 allows.
 */
const PER_CONNECTION_RATE = 10;

/**
 * Sends `target` at a constant arrival rate for `seconds`, bounded in count (rate x seconds) and
 * time. autocannon's `overallRate` is a quota per second: at each one-second tick every
 * connection sends its share back to back, then waits for the next tick. One instance would
 * make each second one burst; so the rate is split over LANES instances started 1/LANES s
 * apart, each with `overallRate` = its share, on connections that carry at most
 * PER_CONNECTION_RATE a second each. A system that cannot keep up answers fewer than rate x seconds:
 * the caller compares `expected` with what was asked.
 */
export async function runAtRate(target: LoadTarget, rate: number, seconds: number): Promise<RateRun> {
  const lanes = Math.min(LANES, rate);
  const started = performance.now();
  const windows: number[][] = [];
  const latencies: number[] = [];
  const unexpected: Record<string, number> = {};
  let errors = 0;
  let timeouts = 0;
  const runs: Array<Promise<void>> = [];
  let connections = 0;
  for (let lane = 0; lane < lanes; lane += 1) {
    const laneRate = Math.floor(rate / lanes) + (lane < rate % lanes ? 1 : 0);
    const laneConnections = Math.max(1, Math.ceil(laneRate / PER_CONNECTION_RATE));
    connections += laneConnections;
    runs.push(
      (async () => {
        await sleep((lane * 1000) / lanes);
        await new Promise<void>((resolve, reject) => {
          const instance = autocannon(
            {
              url: target.url,
              method: target.method,
              headers: target.headers,
              body: target.body,
              connections: laneConnections,
              overallRate: laneRate,
              duration: seconds,
              skipAggregateResult: true,
              ...(target.nextRequest ? { requests: [{ setupRequest: (request) => ({ ...request, ...target.nextRequest!() }) }] } : {}),
            },
            (error, raw) => {
              if (error) return reject(error);
              for (const [status, { count }] of Object.entries(raw.statusCodeStats)) {
                if (Number(status) !== target.expectedStatus) unexpected[status] = (unexpected[status] ?? 0) + count;
              }
              errors += raw.errors;
              timeouts += raw.timeouts;
              resolve();
            },
          );
          instance.on('response', (_client, statusCode, _bytes, responseTimeMs) => {
            if (statusCode !== target.expectedStatus) return;
            latencies.push(responseTimeMs);
            const window = Math.floor((performance.now() - started) / 1000 / WINDOW_SECONDS);
            (windows[window] ??= []).push(responseTimeMs);
          });
        });
      })(),
    );
  }
  await Promise.all(runs);
  const sorted = Float64Array.from(latencies).sort();
  return {
    rate,
    seconds: (performance.now() - started) / 1000,
    expected: sorted.length,
    unexpected,
    errors,
    timeouts,
    latenciesMs: sorted,
    connections,
    // The last window holds only the lanes' tails (under 1 s): too few answers for a p99.
    windowP99Ms: windows
      .filter((window, index) => window !== undefined && (index < windows.length - 1 || window.length >= rate * 2))
      .map((window) => percentile(Float64Array.from(window).sort(), 0.99)),
  };
}

/** Nearest rank, as HDR histograms (and so autocannon) report it. */
export function percentile(sorted: Float64Array, fraction: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.max(0, Math.ceil(fraction * sorted.length) - 1)] ?? Number.NaN;
}
