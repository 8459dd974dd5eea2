import { readFileSync } from 'node:fs';

/** A process whose resident memory the benchmark watches. */
export interface WatchedProcess {
  name: string;
  pid: number;
}

interface Sample {
  /** performance.now() */
  at: number;
  /** Resident set in bytes per watched process (index as in `processes`); NaN once it is gone. */
  rss: number[];
  /** CPU seconds (user + system) each watched process has used since it started; NaN once it is gone. */
  cpu: number[];
  /** CPU seconds the whole machine has used since boot (every core, idle excluded). */
  machineCpu: number;
}

/** Clock ticks per second of /proc's CPU counters (USER_HZ: 100 on Linux's every platform). */
const TICKS_PER_SECOND = 100;

export const RSS_INTERVAL_MS = 250;

/**
 * Samples every watched process's VmRSS from /proc/<pid>/status every 250 ms, from `start` to
 * `stop`, so peaks between two reports are seen. Reading /proc costs microseconds, and it runs
 * in the benchmark's process, not the measured ones.
 */
export class RssSampler {
  private readonly samples: Sample[] = [];
  private timer: NodeJS.Timeout | undefined;

  constructor(readonly processes: WatchedProcess[]) {}

  start(): this {
    this.sample();
    this.timer = setInterval(() => this.sample(), RSS_INTERVAL_MS);
    return this;
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  /** Highest RSS of each process (bytes) over samples taken between `from` and `to` (performance.now()). */
  peaks(from = 0, to = Number.POSITIVE_INFINITY): number[] {
    const peaks = this.processes.map(() => Number.NaN);
    for (const sample of this.samples) {
      if (sample.at < from || sample.at > to) continue;
      sample.rss.forEach((rss, index) => {
        // `!(rss <= peak)` also holds while the peak is still NaN.
        if (Number.isFinite(rss) && !(rss <= (peaks[index] ?? Number.NaN))) peaks[index] = rss;
      });
    }
    return peaks;
  }

  /**
   * CPU seconds each process used between the samples nearest `from` and `to`
   * (performance.now()), and the machine's total; within one sampling interval of exact.
   */
  cpuBetween(from: number, to: number): { processes: number[]; machine: number } {
    const first = this.samples.find((sample) => sample.at >= from);
    const last = [...this.samples].reverse().find((sample) => sample.at <= to);
    if (!first || !last || last.at <= first.at) return { processes: this.processes.map(() => Number.NaN), machine: Number.NaN };
    return { processes: first.cpu.map((cpu, index) => (last.cpu[index] ?? Number.NaN) - cpu), machine: last.machineCpu - first.machineCpu };
  }

  /** The samples of process `index` between `from` and `to`: [performance.now(), bytes]. */
  series(index: number, from = 0, to = Number.POSITIVE_INFINITY): Array<[number, number]> {
    return this.samples.filter((sample) => sample.at >= from && sample.at <= to).map((sample) => [sample.at, sample.rss[index] ?? Number.NaN]);
  }

  private sample(): void {
    this.samples.push({
      at: performance.now(),
      rss: this.processes.map(({ pid }) => residentBytes(pid)),
      cpu: this.processes.map(({ pid }) => cpuSeconds(pid)),
      machineCpu: machineCpuSeconds(),
    });
  }
}

/** VmRSS of `pid` in bytes; NaN when the process is gone or there is no /proc. */
export function residentBytes(pid: number): number {
  try {
    const match = /^VmRSS:\s+(\d+)\s+kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) * 1024 : Number.NaN;
  } catch {
    return Number.NaN;
  }
}

/** utime + stime of `pid` in seconds (fields 14 and 15 of /proc/<pid>/stat); NaN when it is gone. */
function cpuSeconds(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces: count fields after its closing parenthesis.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
  } catch {
    return Number.NaN;
  }
}

/** Busy CPU seconds of the whole machine since boot, from /proc/stat's first line (all but idle and iowait). */
function machineCpuSeconds(): number {
  try {
    const [, ...ticks] = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).map(Number);
    const [user = 0, nice = 0, system = 0, , , irq = 0, softirq = 0, steal = 0] = ticks;
    return (user + nice + system + irq + softirq + steal) / TICKS_PER_SECOND;
  } catch {
    return Number.NaN;
  }
}

export function megabytes(bytes: number): string {
  return Number.isFinite(bytes) ? (bytes / 1024 / 1024).toFixed(0) : '-';
}
