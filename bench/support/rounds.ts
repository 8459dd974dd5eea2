import { machineBusySeconds, type ChildServer } from './child-server.js';
import type { CpuMeter } from './postgres-cpu.js';
import { runLoad, summarize, type LoadRun, type LoadSettings, type LoadSummary, type LoadTarget } from './load.js';
import { formatRound } from './report.js';

/** A window of the monotonic clock that V8's CPU profiles use too, in microseconds. */
export interface ClockWindow {
  startUs: number;
  endUs: number;
}

/** One load run of a target, with the CPU its server used meanwhile. */
export interface Measurement {
  run: LoadRun;
  summary: LoadSummary;
  /** Undefined where there is no /proc. */
  cpuSeconds?: number;
  /** The database's CPU meanwhile, when the target has a database meter. */
  dbCpuSeconds?: number;
  /**
   * CPU the rest of the machine used meanwhile: everything but this process, the server and
   * its database backends (so other work on the machine, NATS, PostgreSQL's own background
   * processes). Undefined without /proc.
   */
  elsewhereCpuSeconds?: number;
  window: ClockWindow;
}

/** A target, the child serving it, and what its measured rounds gave. */
export interface Measured {
  target: LoadTarget;
  server: ChildServer;
  results: LoadRun[];
  /** CPU seconds the server used during the measured rounds (NaN without /proc). */
  cpuSeconds: number;
  /** Measures the CPU of the database the server uses, if it uses one. */
  database?: CpuMeter;
  /** CPU seconds the database used during the measured rounds (NaN when unknown). */
  dbCpuSeconds: number;
  /** When the measured rounds ran (for cutting a CPU profile to them). */
  windows: ClockWindow[];
  /**
   * Runs after each load run of this target, warm-up included, before anything else is
   * measured: for work the load left behind (queued runs). Returns a line to print, if any.
   */
  afterLoad?: (measurement: Measurement, phase: 'warm-up' | 'round') => Promise<string | undefined>;
}

export function measured(target: LoadTarget, server: ChildServer, extras: Pick<Measured, 'database' | 'afterLoad'> = {}): Measured {
  return { target, server, results: [], cpuSeconds: 0, dbCpuSeconds: 0, windows: [], ...extras };
}

export function monotonicMicros(): number {
  return Number(process.hrtime.bigint() / 1000n);
}

export async function measure(entry: Measured, settings: LoadSettings): Promise<Measurement> {
  const stopDatabaseMeter = await entry.database?.start();
  const machineBefore = machineBusySeconds();
  const selfBefore = process.cpuUsage();
  const cpuBefore = entry.server.cpuSeconds();
  const startUs = monotonicMicros();
  const run = await runLoad(entry.target, settings);
  const endUs = monotonicMicros();
  const cpuAfter = entry.server.cpuSeconds();
  const self = process.cpuUsage(selfBefore);
  const machineAfter = machineBusySeconds();
  const dbCpuSeconds = await stopDatabaseMeter?.();
  const cpuSeconds = cpuBefore === undefined || cpuAfter === undefined ? undefined : cpuAfter - cpuBefore;
  const elsewhereCpuSeconds =
    machineBefore === undefined || machineAfter === undefined || cpuSeconds === undefined
      ? undefined
      : machineAfter - machineBefore - (self.user + self.system) / 1e6 - cpuSeconds - (dbCpuSeconds ?? 0);
  return { run, summary: summarize(entry.target, [run]), cpuSeconds, dbCpuSeconds, elsewhereCpuSeconds, window: { startUs, endUs } };
}

/**
 * Warms both targets up (JIT, connection pools, caches), then measures `rounds` rounds in ABBA
 * order (A B, B A, A B, …), so neither target always runs first or right after the other.
 */
export async function runRounds(entries: [Measured, Measured], settings: LoadSettings, rounds: number, warmup: number): Promise<void> {
  for (const entry of entries) {
    const measurement = await measure(entry, { ...settings, duration: warmup });
    console.log(`warm-up   ${formatRound(entry.target, measurement)}`);
    await settle(entry, measurement, 'warm-up');
  }
  for (let round = 0; round < rounds; round++) {
    const order = round % 2 === 0 ? entries : [...entries].reverse();
    for (const entry of order) {
      const measurement = await measure(entry, settings);
      entry.results.push(measurement.run);
      entry.cpuSeconds += measurement.cpuSeconds ?? Number.NaN;
      entry.dbCpuSeconds += measurement.dbCpuSeconds ?? Number.NaN;
      entry.windows.push(measurement.window);
      console.log(`round ${round + 1}   ${formatRound(entry.target, measurement)}`);
      await settle(entry, measurement, 'round');
    }
  }
}

async function settle(entry: Measured, measurement: Measurement, phase: 'warm-up' | 'round'): Promise<void> {
  const line = await entry.afterLoad?.(measurement, phase);
  if (line) console.log(`          ${line}`);
}
