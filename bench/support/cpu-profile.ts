import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { ClockWindow } from './measurement.js';

/** The parts of V8's `.cpuprofile` format (what `node --cpu-prof` writes) read here. */
interface CpuProfile {
  nodes: Array<{ id: number; callFrame: { functionName: string; url: string; lineNumber: number } }>;
  /** Microseconds on the monotonic clock `process.hrtime` uses, so windows taken here apply. */
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}

/** `BENCH_CPU_PROFILE=1`: the benchmark runs the system's processes under `--cpu-prof` (and keeps their profiles). */
export const CPU_PROFILE_REQUESTED = process.env.BENCH_CPU_PROFILE === '1';

/** Node flags that write a process's profile into `dir` when it stops, if one was requested. */
export function cpuProfileFlags(dir: string): string[] {
  return CPU_PROFILE_REQUESTED ? ['--cpu-prof', `--cpu-prof-dir=${dir}`] : [];
}

/**
 * The main-thread `.cpuprofile` files in `dir`, one per profiled process that exited normally.
 * Names are `CPU.<date>.<time>.<pid>.<thread>.<sequence>.cpuprofile`; thread 0 is the main
 * thread. The others are register.mjs's module-hooks thread, idle once the server has loaded.
 */
export function profileFiles(dir: string): string[] {
  try {
    return readdirSync(dir)
      .filter((name) => /^CPU\.\d+\.\d+\.\d+\.0\.\d+\.cpuprofile$/.test(name))
      .map((name) => path.join(dir, name));
  } catch {
    return [];
  }
}

/**
 * Self time by code area and the top functions by self time, over the samples taken inside
 * `windows` (all samples when none are given). Idle time is left out of the percentages.
 */
export function summarizeProfile(file: string, windows: ClockWindow[] = [], top = 15): string {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const frames = new Map(profile.nodes.map((node) => [node.id, node.callFrame]));
  const byFunction = new Map<string, number>();
  const byArea = new Map<string, number>();
  let busyUs = 0;
  let idleUs = 0;
  let time = profile.startTime;
  profile.samples.forEach((id, index) => {
    const delta = profile.timeDeltas[index] ?? 0;
    time += delta;
    if (windows.length > 0 && !windows.some((window) => time >= window.startUs && time <= window.endUs)) return;
    const frame = frames.get(id);
    if (!frame || frame.functionName === '(idle)') {
      idleUs += delta;
      return;
    }
    busyUs += delta;
    const name = `${frame.functionName || '(anonymous)'}${frame.url ? ` ${shortUrl(frame.url)}:${frame.lineNumber + 1}` : ''}`;
    byFunction.set(name, (byFunction.get(name) ?? 0) + delta);
    const area = areaOf(frame.url, frame.functionName);
    byArea.set(area, (byArea.get(area) ?? 0) + delta);
  });
  if (busyUs === 0) return '(no samples in the measured windows)';
  const share = (us: number) => `${((us / busyUs) * 100).toFixed(1).padStart(5)}%`;
  const rank = (map: Map<string, number>, count: number) =>
    [...map.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, count)
      .map(([name, us]) => `  ${share(us)}  ${name}`);
  return [
    `${(busyUs / 1e6).toFixed(1)} s busy, ${(idleUs / 1e6).toFixed(1)} s idle in the sampled windows; shares of busy time:`,
    'self time by area:',
    ...rank(byArea, 12),
    `top ${top} functions by self time:`,
    ...rank(byFunction, top),
  ].join('\n');
}

/** A package, a Runline lib or service, Node's own code, or V8's bookkeeping. */
function areaOf(url: string, functionName: string): string {
  if (!url) return functionName.startsWith('(') ? functionName : '(native)';
  if (url.startsWith('node:')) return 'node: internals';
  const modules = url.lastIndexOf('/node_modules/');
  if (modules >= 0) {
    const [scope = '', name = ''] = url.slice(modules + '/node_modules/'.length).split('/');
    return scope.startsWith('@') ? `${scope}/${name}` : scope;
  }
  const runline = /\/dist\/(libs|services)\/([^/]+)\//.exec(url);
  if (runline) return `runline ${runline[1]}/${runline[2]}`;
  return shortUrl(url);
}

function shortUrl(url: string): string {
  const modules = url.lastIndexOf('/node_modules/');
  if (modules >= 0) return url.slice(modules + '/node_modules/'.length);
  const dist = url.lastIndexOf('/dist/');
  if (dist >= 0) return url.slice(dist + '/dist/'.length);
  return url.replace(/^file:\/\//, '');
}
