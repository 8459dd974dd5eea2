import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import path from 'node:path';
import { processCpuSeconds } from './child-server.js';
import { BENCH_DIR } from './cli.js';
import type { BenchSession } from './session.js';

/** What the benchmark tells the baseline child (servers/timer-baseline.server.ts). */
export type BaselineRequest = {
  type: 'arm';
  /** Epoch milliseconds at which the window's runs are due: these are measured. */
  windowDues: number[];
  /** Epoch milliseconds of the far-away runs: armed, so as many timers wait as jobs do, never fired. */
  farDues: number[];
};

/** What the baseline child answers: once started, and once the last window timer has fired. */
export type BaselineReply = { type: 'ready' } | { type: 'fired'; latenessMs: number[] };

/** The `setTimeout` scheduler child, idle until it is armed. */
export interface TimerBaseline {
  pid: number;
  /** CPU seconds the child has used so far (undefined without /proc). */
  cpuSeconds(): number | undefined;
  /**
   * Arms one timer per run; resolves with each window run's lateness (fired − due, ms, in the
   * order of `windowDues`) once the last has fired, or rejects after `timeoutMs`.
   */
  arm(windowDues: number[], farDues: number[], timeoutMs: number): Promise<number[]>;
}

/** Starts the baseline child and waits until it listens; stopped by the session's cleanup. */
export async function startTimerBaseline(session: BenchSession): Promise<TimerBaseline> {
  const log = openSync(path.join(session.workDir, 'timer-baseline.log'), 'w');
  const child = spawn(process.execPath, ['--import', path.join(BENCH_DIR, 'register.mjs'), path.join(BENCH_DIR, 'servers', 'timer-baseline.server.ts')], {
    stdio: ['ignore', log, log, 'ipc'],
  });
  closeSync(log);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  session.onCleanup('stop the timer baseline', async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
  });
  await nextReply(child, 'ready', 30_000);
  return {
    pid: child.pid ?? -1,
    cpuSeconds: () => (child.pid === undefined ? undefined : processCpuSeconds(child.pid)),
    async arm(windowDues, farDues, timeoutMs) {
      const fired = nextReply(child, 'fired', timeoutMs);
      const request: BaselineRequest = { type: 'arm', windowDues, farDues };
      child.send(request);
      return (await fired).latenessMs;
    },
  };
}

function nextReply<T extends BaselineReply['type']>(child: ChildProcess, type: T, timeoutMs: number): Promise<Extract<BaselineReply, { type: T }>> {
  return new Promise((resolve, reject) => {
    const onMessage = (reply: BaselineReply) => {
      if (reply.type !== type) return;
      done();
      resolve(reply as Extract<BaselineReply, { type: T }>);
    };
    const onExit = () => {
      done();
      reject(new Error(`the timer baseline exited before it answered "${type}"`));
    };
    const timer = setTimeout(() => {
      done();
      reject(new Error(`the timer baseline did not answer "${type}" within ${timeoutMs} ms`));
    }, timeoutMs);
    const done = () => {
      clearTimeout(timer);
      child.off('message', onMessage);
      child.off('exit', onExit);
    };
    child.on('message', onMessage);
    child.once('exit', onExit);
  });
}
