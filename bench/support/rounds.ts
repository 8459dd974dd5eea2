import { machineBusySeconds, type ChildServer } from './child-server.js';
import { runLoad, summarize, type LoadSettings, type LoadTarget } from './load.js';
import type { Measured, Measurement } from './measurement.js';
import { formatRound } from './report.js';

export type { ClockWindow, Measured, Measurement } from './measurement.js';

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
