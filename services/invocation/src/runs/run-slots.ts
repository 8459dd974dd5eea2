/** A counting semaphore: at most `size` async runs execute at once in this process. */
export class RunSlots {
  private free: number;
  private readonly waiting: Array<() => void> = [];
  private readonly running = new Set<Promise<unknown>>();

  constructor(size: number) {
    this.free = size;
  }

  /** Resolves once a slot is free; the slot is taken until `release`. */
  async acquire(): Promise<void> {
    if (this.free > 0) {
      this.free--;
      return;
    }
    await new Promise<void>((resolve) => this.waiting.push(resolve));
  }

  release(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.free++;
  }

  /** Runs `work` in the slot already acquired, releasing it when `work` settles. */
  track(work: Promise<unknown>): void {
    const tracked = work.finally(() => {
      this.running.delete(tracked);
      this.release();
    });
    this.running.add(tracked);
  }

  /** Waits for every tracked run (graceful shutdown). */
  async drain(): Promise<void> {
    await Promise.allSettled([...this.running]);
  }
}
