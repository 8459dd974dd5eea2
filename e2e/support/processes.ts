import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import path from 'node:path';

export const REPO_ROOT = path.resolve(import.meta.dirname, '..', '..');

/** The compiled system (`npm run build`); `npm test` builds it first. */
export function compiledEntry(relative: string): string {
  const file = path.join(REPO_ROOT, 'dist', relative);
  if (!existsSync(file)) throw new Error(`${file} is missing: run \`npm run build\` first (npm test does)`);
  return file;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

export interface RunningProcess {
  child: ChildProcess;
  output(): string;
  /** SIGTERM, then the exit code (or the signal's name); SIGKILL after `timeoutMs`. */
  stop(timeoutMs?: number): Promise<number | string>;
  /** The exit code once the process ends by itself; SIGKILL after `timeoutMs`. */
  exit(timeoutMs?: number): Promise<number | string>;
}

/** Runs `node <entry> [...args]` as a real process with its own environment. */
export function runNode(entry: string, args: string[], env: NodeJS.ProcessEnv): RunningProcess {
  return runProcess(process.execPath, [entry, ...args], env);
}

/** Runs `command [...args]` as a real process with its own environment. */
export function runProcess(command: string, args: string[], env: NodeJS.ProcessEnv): RunningProcess {
  const child = spawn(command, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | string>((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal ?? 'unknown')));
  const exit = async (timeoutMs: number) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    try {
      return await exited;
    } finally {
      clearTimeout(timer);
    }
  };
  return {
    child,
    output: () => output,
    stop(timeoutMs = 15_000) {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      return exit(timeoutMs);
    },
    exit: (timeoutMs = 60_000) => exit(timeoutMs),
  };
}

/** Waits until `url` answers 200, or fails with the process output after `timeoutMs`. */
export async function waitForOk(url: string, process: RunningProcess, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (process.child.exitCode !== null) throw new Error(`process exited (${process.child.exitCode}) before ${url} was ready:\n${process.output()}`);
    try {
      if ((await fetch(url)).status === 200) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`${url} not ready within ${timeoutMs} ms:\n${process.output()}`);
}
