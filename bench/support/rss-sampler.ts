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
}

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

  /** The samples of process `index` between `from` and `to`: [performance.now(), bytes]. */
  series(index: number, from = 0, to = Number.POSITIVE_INFINITY): Array<[number, number]> {
    return this.samples.filter((sample) => sample.at >= from && sample.at <= to).map((sample) => [sample.at, sample.rss[index] ?? Number.NaN]);
  }

  private sample(): void {
    this.samples.push({ at: performance.now(), rss: this.processes.map(({ pid }) => residentBytes(pid)) });
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

export function megabytes(bytes: number): string {
  return Number.isFinite(bytes) ? (bytes / 1024 / 1024).toFixed(0) : '-';
}
