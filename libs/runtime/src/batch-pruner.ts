import type { Logger } from '@runline/observability';

export interface BatchPrunerOptions {
  /** What is pruned, for the log lines ("ended scheduler jobs"). */
  what: string;
  /** Rows older than this are deleted. */
  retentionMs: number;
  intervalMs: number;
  /** Rows per statement: short statements, so the work that shares the table never waits long behind one. */
  batchSize: number;
  /** Deletes at most `limit` rows older than `before` (skipping rows another replica holds); how many it deleted. */
  deleteBatch: (before: Date, limit: number) => Promise<number>;
  logger: Logger;
}

/**
 * Keeps a table from growing for ever: every `intervalMs` (and at start) it deletes the rows
 * older than the retention, batch by batch, until a batch comes back short. One round at a
 * time in a process; replicas may prune at the same time. A failed round is logged and the
 * next one tries again.
 */
export class BatchPruner {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<number> | undefined;
  private stopped = false;

  constructor(private readonly options: BatchPrunerOptions) {}

  start(): void {
    this.timer = setInterval(() => void this.prune(), this.options.intervalMs);
    this.timer.unref();
    void this.prune();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    await this.running;
  }

  /** One round (or the one in progress): resolves with how many rows it deleted. */
  prune(now: Date = new Date()): Promise<number> {
    this.running ??= this.deleteOld(now).finally(() => (this.running = undefined));
    return this.running;
  }

  private async deleteOld(now: Date): Promise<number> {
    const { what, retentionMs, batchSize, deleteBatch, logger } = this.options;
    const before = new Date(now.getTime() - retentionMs);
    let total = 0;
    try {
      let deleted: number;
      do {
        deleted = await deleteBatch(before, batchSize);
        total += deleted;
      } while (deleted === batchSize && !this.stopped);
      if (total > 0) logger.info({ deleted: total, before }, `pruned ${what}`);
    } catch (error) {
      logger.warn({ err: error, deletedSoFar: total }, `pruning ${what} failed; the next round tries again`);
    }
    return total;
  }
}
