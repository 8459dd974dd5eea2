import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { UsageError } from './cli.js';

/**
 * What one benchmark run has set up: undone in reverse order on success, failure and Ctrl-C
 * alike, and a work directory for child logs and profiles.
 */
export class BenchSession {
  private readonly cleanups: Array<{ what: string; run: () => Promise<unknown> }> = [];
  private work: string | undefined;

  /** Created on first use; removed by `finish` after a clean run without profiles. */
  get workDir(): string {
    this.work ??= mkdtempSync(path.join(os.tmpdir(), 'runline-bench-'));
    return this.work;
  }

  onCleanup(what: string, run: () => Promise<unknown>): void {
    this.cleanups.push({ what, run });
  }

  async cleanUp(): Promise<void> {
    while (this.cleanups.length > 0) {
      const cleanup = this.cleanups.pop();
      try {
        await cleanup?.run();
      } catch (error) {
        console.error(`cleanup failed (${cleanup?.what}): ${(error as Error).message}`);
      }
    }
  }

  /** Cleans up; keeps the work directory when the run was not clean or holds profiles. */
  async finish(options: { clean: boolean; keepWork: boolean }): Promise<void> {
    await this.cleanUp();
    if (this.work === undefined) return;
    if (options.clean && !options.keepWork) rmSync(this.work, { recursive: true, force: true });
    else console.log(`Logs kept in ${this.work}`);
  }

  keptWorkNotice(): string | undefined {
    return this.work === undefined ? undefined : `Logs kept in ${this.work}`;
  }
}

/**
 * Runs a benchmark's main function: usage errors exit 2 with the usage text, failures exit 1
 * after cleaning up, and SIGINT/SIGTERM clean up before exiting.
 */
export async function runBench(usage: string, main: (session: BenchSession) => Promise<number>): Promise<void> {
  const session = new BenchSession();
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      console.error(`\n${signal}: cleaning up`);
      void session.cleanUp().finally(() => {
        const notice = session.keptWorkNotice();
        if (notice) console.error(notice);
        process.exit(130);
      });
    });
  }
  try {
    process.exitCode = await main(session);
  } catch (error) {
    console.error(error instanceof UsageError ? `${error.message}\n\n${usage}` : error);
    await session.cleanUp();
    const notice = session.keptWorkNotice();
    if (notice) console.error(notice);
    process.exitCode = error instanceof UsageError ? 2 : 1;
  }
}
