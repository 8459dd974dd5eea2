import { readdirSync, readFileSync } from 'node:fs';

/** File descriptors this process has open now (its sockets among them), from /proc; undefined without it. */
export function openFileCount(): number | undefined {
  try {
    return readdirSync('/proc/self/fd').length;
  } catch {
    return undefined;
  }
}

/** This process's soft limit on open files (`ulimit -n`), from /proc; undefined without it. */
export function openFileLimit(): number | undefined {
  try {
    const line = readFileSync('/proc/self/limits', 'utf8').split('\n').find((row) => row.startsWith('Max open files'));
    // "Max open files            20000                20000                files"
    const soft = Number(line?.split(/\s{2,}/)[1]);
    return Number.isFinite(soft) ? soft : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The most files this process had open at once, sampled every `everyMs` while it runs: a
 * benchmark whose clients hold thousands of sockets reads how close it came to its limit
 * (EMFILE). A peak shorter than the interval can be missed.
 */
export function watchOpenFiles(everyMs = 500): { takePeak(): number | undefined; stop(): void } {
  let peak: number | undefined;
  const sample = () => {
    const count = openFileCount();
    if (count !== undefined) peak = Math.max(peak ?? 0, count);
  };
  sample();
  const timer = setInterval(sample, everyMs).unref();
  return {
    /** The peak since the last call (or the start); the count resets to what is open now. */
    takePeak: () => {
      sample();
      const taken = peak;
      peak = openFileCount();
      return taken;
    },
    stop: () => clearInterval(timer),
  };
}
