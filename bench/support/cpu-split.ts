import { machineBusySeconds } from './child-server.js';
import type { CpuMeter } from './postgres-cpu.js';

/** A process whose CPU time is read from /proc (a child server, the timer baseline). */
export interface CpuSource {
  name: string;
  cpuSeconds(): number | undefined;
}

/** CPU seconds each part of the machine used over a stretch of wall time. */
export interface CpuSplit {
  wallSeconds: number;
  /** By source name; NaN where it could not be read. */
  bySource: Map<string, number>;
  /** The benchmark database's PostgreSQL backends; NaN when unknown. */
  database: number;
  /** This benchmark process. */
  benchmark: number;
  /**
   * Everything else that was busy: the NATS server, PostgreSQL's own background processes,
   * other work on the machine. NaN without /proc.
   */
  elsewhere: number;
}

/**
 * Starts measuring; the function it returns stops and gives the split. On two cores every
 * part competes for the same CPU, so where it went explains latency as much as throughput.
 */
export async function startCpuSplit(sources: CpuSource[], database: CpuMeter): Promise<() => Promise<CpuSplit>> {
  const stopDatabase = await database.start();
  const before = sources.map((source) => source.cpuSeconds());
  const machineBefore = machineBusySeconds();
  const selfBefore = process.cpuUsage();
  const startedAt = performance.now();
  return async () => {
    const wallSeconds = (performance.now() - startedAt) / 1000;
    const self = process.cpuUsage(selfBefore);
    const machineAfter = machineBusySeconds();
    const bySource = new Map<string, number>();
    sources.forEach((source, index) => {
      const start = before[index];
      const end = source.cpuSeconds();
      bySource.set(source.name, start === undefined || end === undefined ? Number.NaN : end - start);
    });
    const databaseSeconds = (await stopDatabase()) ?? Number.NaN;
    const benchmark = (self.user + self.system) / 1e6;
    const accounted = [...bySource.values()].reduce((sum, seconds) => sum + seconds, 0) + databaseSeconds + benchmark;
    const elsewhere = machineBefore === undefined || machineAfter === undefined ? Number.NaN : machineAfter - machineBefore - accounted;
    return { wallSeconds, bySource, database: databaseSeconds, benchmark, elsewhere };
  };
}

/** `system 0.85, scheduler 0.10, PostgreSQL 0.60, …` in cores (CPU seconds per wall second). */
export function formatCores(split: CpuSplit): string {
  const cores = (seconds: number) => (Number.isFinite(seconds) ? Math.max(0, seconds / split.wallSeconds).toFixed(2) : '-');
  const parts = [...split.bySource].map(([name, seconds]) => `${name} ${cores(seconds)}`);
  parts.push(`PostgreSQL ${cores(split.database)}`, `benchmark ${cores(split.benchmark)}`, `elsewhere ${cores(split.elsewhere)}`);
  return parts.join(', ');
}

/** `system 1398, scheduler 120, PostgreSQL 893` in CPU microseconds per item. */
export function formatMicrosPer(split: CpuSplit, items: number): string {
  const micros = (seconds: number) => (Number.isFinite(seconds) && items > 0 ? ((seconds * 1e6) / items).toFixed(0) : '-');
  const parts = [...split.bySource].map(([name, seconds]) => `${name} ${micros(seconds)}`);
  parts.push(`PostgreSQL ${micros(split.database)}`);
  return parts.join(', ');
}
