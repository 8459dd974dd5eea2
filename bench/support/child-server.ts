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
  const child = spawn(process.execPath, options.args, { env: options.env, stdio: ['ignore', log, log, 'ipc'] });
  closeSync(log);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = `http://127.0.0.1:${options.port}`;
  const server: ChildServer = {
    name: options.name,
    url,
    pid: child.pid ?? -1,
    logFile: options.logFile,
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

export function logTail(file: string, lines = 20): string {
  try {
    return readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}
