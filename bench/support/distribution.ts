/** Order statistics of a set of measurements (milliseconds, here). */
export interface Distribution {
  count: number;
  min: number;
  p50: number;
  p90: number;
  p99: number;
  /** The 99.9th percentile: with fewer than 1,000 values it is the max. */
  p999: number;
  max: number;
}

/** The distribution of the finite values (NaN, for something that did not happen, is left out). */
export function distributionOf(values: Iterable<number>): Distribution {
  const sorted = Float64Array.from([...values].filter(Number.isFinite)).sort();
  return {
    count: sorted.length,
    min: sorted[0] ?? Number.NaN,
    p50: percentile(sorted, 0.5),
    p90: percentile(sorted, 0.9),
    p99: percentile(sorted, 0.99),
    p999: percentile(sorted, 0.999),
    max: sorted[sorted.length - 1] ?? Number.NaN,
  };
}

/** Nearest rank, as HDR histograms (and so autocannon, and load.ts) report it. */
function percentile(sorted: Float64Array, fraction: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.max(0, Math.ceil(fraction * sorted.length) - 1)] ?? Number.NaN;
}
