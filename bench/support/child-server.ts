import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

/** A server the benchmark runs in a child process, so it never shares a thread with the load. */
export interface ChildServer {
  name: string;
  /** `http://127.0.0.1:<port>` */
  url: string;
  pid: number;
  /** The child's stdout and stderr. */
  logFile: string;
  /**
   * CPU seconds (user + system) the child has used so far, from /proc; undefined where there
   * is no /proc. The difference over a round, per request, is a cost that other load on the
   * machine disturbs far less than throughput.
   */
  cpuSeconds(): number | undefined;
  /** SIGTERM, then SIGKILL if it has not exited within the grace period. Safe to call twice. */
  stop(): Promise<void>;
}

export interface ChildServerOptions {
  name: string;
  /** Arguments after `node` (flags, script, script arguments). */
  args: string[];
  env: NodeJS.ProcessEnv;
  port: number;
  /** GET path that answers 200 once the server is ready. */
  readyPath: string;
  logFile: string;
  readyTimeoutMs?: number;
}

const STOP_GRACE_MS = 15_000;

/** A port that was free a moment ago (the child binds it right after). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('could not pick a free port');
  return address.port;
}

/** Starts the child and resolves once `readyPath` answers 200; on failure the child is stopped. */
export async function startChildServer(options: ChildServerOptions): Promise<ChildServer> {
  const log = openSync(options.logFile, 'w');
  // The IPC channel is unused except that its closing tells our own child scripts the
  // benchmark has gone, so no server outlives a killed benchmark.
  // BENCH_CHILD_FLAGS: Node flags for every child (e.g. `--trace-gc`, which NODE_OPTIONS refuses).
  const flags = (process.env.BENCH_CHILD_FLAGS ?? '').split(' ').filter((flag) => flag !== '');
  const child = spawn(process.execPath, [...flags, ...options.args], { env: options.env, stdio: ['ignore', log, log, 'ipc'] });
  closeSync(log);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = `http://127.0.0.1:${options.port}`;
  const server: ChildServer = {
    name: options.name,
    url,
    pid: child.pid ?? -1,
    logFile: options.logFile,
    cpuSeconds: () => (child.pid === undefined ? undefined : processCpuSeconds(child.pid)),
    stop: () => stopChild(child, exited),
  };
  try {
    await waitUntilReady(child, url + options.readyPath, options.readyTimeoutMs ?? 60_000);
  } catch (error) {
    await server.stop();
    throw new Error(`${options.name} did not start: ${(error as Error).message}\n--- ${options.logFile} (end) ---\n${logTail(options.logFile)}`);
  }
  return server;
}

async function waitUntilReady(child: ChildProcess, url: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`exited early (${child.exitCode ?? child.signalCode})`);
    }
    try {
      const response = await fetch(url, { signal: AbortSignal.timeout(2000) });
      await response.arrayBuffer();
      if (response.status === 200) return;
    } catch {
      // not listening yet
    }
    await sleep(100);
  }
  throw new Error(`no 200 from ${url} within ${timeoutMs} ms`);
}

async function stopChild(child: ChildProcess, exited: Promise<void>): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS);
  await exited;
  clearTimeout(timer);
}

/** Clock ticks per second of /proc/<pid>/stat times: 100 on every Linux we run on. */
const CLOCK_TICKS = 100;

/** CPU seconds (user + system) process `pid` has used so far; undefined without /proc or access. */
export function processCpuSeconds(pid: number): number | undefined {
  try {
    // The command name (field 2) is in parentheses and may hold spaces: count after it.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // utime and stime are fields 14 and 15 of the whole line, 12 and 13 after the name.
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
  } catch {
    return undefined;
  }
}

/**
 * CPU seconds the whole machine has spent busy (all cores; everything but idle and I/O wait)
 * since boot, from /proc/stat; undefined where there is none.
 */
export function machineBusySeconds(): number | undefined {
  try {
    const [, ...fields] = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]?.trim().split(/\s+/) ?? [];
    const ticks = fields.map(Number);
    const total = ticks.reduce((sum, value) => sum + value, 0);
    // Fields: user nice system idle iowait irq softirq steal guest guest_nice; guests are in user.
    const idle = (ticks[3] ?? 0) + (ticks[4] ?? 0);
    const guests = (ticks[8] ?? 0) + (ticks[9] ?? 0);
    return (total - idle - guests) / CLOCK_TICKS;
  } catch {
    return undefined;
  }
}

export function logTail(file: string, lines = 20): string {
  try {
    return readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}
