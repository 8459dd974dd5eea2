import { isClean, summarize, type LoadSummary, type LoadTarget } from './load.js';
import type { Measured, Measurement } from './measurement.js';

/** Prints the two targets' merged rounds as a table; true when every answer was the expected one. */
export function printComparison(entries: [Measured, Measured]): { baseline: LoadSummary; subject: LoadSummary; clean: boolean } {
  const [baseline, subject] = entries.map((entry) => summarize(entry.target, entry.results)) as [LoadSummary, LoadSummary];
  const rows = entries.map(({ target, cpuSeconds, database, dbCpuSeconds }, index) => {
    const summary = index === 0 ? baseline : subject;
    return [
      target.label,
      summary.requestsPerSecond.toFixed(0),
      ms(summary.latencyMs.mean),
      ms(summary.latencyMs.p50),
      ms(summary.latencyMs.p99),
      formatCpu(cpuSeconds, summary.expected),
      database ? formatCpu(dbCpuSeconds, summary.expected) : '-',
      `${target.expectedStatus} x ${summary.expected}`,
      formatOther(summary),
    ];
  });
  printTable([['target', 'req/s', 'mean ms', 'p50 ms', 'p99 ms', 'CPU us/req', 'DB CPU us/req', 'expected', 'other'], ...rows]);
  return { baseline, subject, clean: isClean(baseline) && isClean(subject) };
}

/**
 * The subject's throughput as a share of the baseline's: over all rounds, per round (the
 * spread shows how much other load on the machine moved it), and as the inverse ratio of CPU
 * per request, which predicts the throughput ratio when both servers are CPU-bound and which
 * other load moves much less.
 */
export function throughputRatios(entries: [Measured, Measured]): { ratio: number; perRound: number[]; cpuRatio: number } {
  const [baseline, subject] = entries.map((entry) => summarize(entry.target, entry.results)) as [LoadSummary, LoadSummary];
  const perRound = entries[0].results.map((baselineRun, round) => {
    const subjectRun = entries[1].results[round];
    if (subjectRun === undefined) return Number.NaN;
    return summarize(entries[1].target, [subjectRun]).requestsPerSecond / summarize(entries[0].target, [baselineRun]).requestsPerSecond;
  });
  const cpuRatio = entries[0].cpuSeconds / baseline.expected / (entries[1].cpuSeconds / subject.expected);
  return { ratio: subject.requestsPerSecond / baseline.requestsPerSecond, perRound, cpuRatio };
}

export function percent(fraction: number): string {
  return Number.isFinite(fraction) ? `${(fraction * 100).toFixed(1)}%` : '-';
}

export function ms(value: number): string {
  return Number.isFinite(value) ? value.toFixed(2) : '-';
}

export function formatRound(target: LoadTarget, { summary, cpuSeconds, dbCpuSeconds, elsewhereCpuSeconds }: Measurement): string {
  const database = dbCpuSeconds === undefined ? '' : ` + DB ${formatCpu(dbCpuSeconds, summary.expected)}`;
  // In cores: how much the rest of the machine was busy meanwhile (contention, NATS, …).
  const elsewhere = elsewhereCpuSeconds === undefined || summary.seconds === 0 ? '' : `  elsewhere ${Math.max(0, elsewhereCpuSeconds / summary.seconds).toFixed(2)} cores`;
  return (
    `${target.label.padEnd(34)} ${summary.requestsPerSecond.toFixed(0).padStart(6)} req/s  ` +
    `p50 ${ms(summary.latencyMs.p50)} ms  p99 ${ms(summary.latencyMs.p99)} ms  ` +
    `CPU ${formatCpu(cpuSeconds, summary.expected)}${database} us/req  other: ${formatOther(summary)}${elsewhere}`
  );
}

export function formatCpu(cpuSeconds: number | undefined, requests: number): string {
  return cpuSeconds === undefined || !Number.isFinite(cpuSeconds) || requests === 0 ? '-' : ((cpuSeconds * 1e6) / requests).toFixed(0);
}

export function formatOther(summary: LoadSummary): string {
  const parts = Object.entries(summary.unexpected).map(([status, count]) => `${status} x ${count}`);
  if (summary.errors) parts.push(`errors x ${summary.errors}`);
  if (summary.timeouts) parts.push(`timeouts x ${summary.timeouts}`);
  return parts.length ? parts.join(', ') : 'none';
}

export function printTable(rows: string[][]): void {
  const widths = (rows[0] ?? []).map((_, column) => Math.max(...rows.map((row) => (row[column] ?? '').length)));
  for (const row of rows) {
    console.log(row.map((cell, column) => (column === 0 ? cell.padEnd(widths[column] ?? 0) : cell.padStart(widths[column] ?? 0))).join('  '));
  }
}

export function indent(text: string): string {
  return text.replace(/^/gm, '  ');
}
