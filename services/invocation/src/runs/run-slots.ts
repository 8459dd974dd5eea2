/** A counting semaphore: at most `size` holders at once (async runs executing, runs being read). */
export class RunSlots {
  private free: number;
  private readonly waiting: Array<() => void> = [];
  private readonly running = new Set<Promise<unknown>>();

  /** @param onFree called each time a slot becomes free (not when it goes straight to a waiter). */
  constructor(
    private readonly size: number,
    private readonly onFree?: () => void,
  ) {
    this.free = size;
  }

  /** Slots free now. */
  get available(): number {
    return this.free;
  }

  /** Slots held now. */
  get held(): number {
    return this.size - this.free;
  }

  /** Callers waiting for a slot now. */
  get queued(): number {
    return this.waiting.length;
  }

  /** Takes a slot if one is free now (true); otherwise takes nothing. */
  tryAcquire(): boolean {
    if (this.free === 0) return false;
    this.free--;
    return true;
  }

  /** Resolves once a slot is free; the slot is taken until `release`. */
  async acquire(): Promise<void> {
    if (this.tryAcquire()) return;
    await new Promise<void>((resolve) => this.waiting.push(resolve));
  }

  /**
   * Like `acquire`, but gives up after `timeoutMs`: true with the slot taken, false with
   * nothing taken (the waiter leaves the queue, so a later release goes to the next one).
   */
  async acquireWithin(timeoutMs: number): Promise<boolean> {
    if (this.tryAcquire()) return true;
    return new Promise<boolean>((resolve) => {
      const waiter = () => {
        clearTimeout(timer);
        resolve(true);
      };
      const timer = setTimeout(() => {
        const index = this.waiting.indexOf(waiter);
        if (index >= 0) this.waiting.splice(index, 1);
        resolve(false);
      }, timeoutMs);
      this.waiting.push(waiter);
    });
  }

  /**
   * Lends the slot the caller holds to others while it only waits (a start queued behind
   * another batch's transaction): returns the function that takes one back, ahead of callers
   * waiting for their first; calling it again does nothing.
   */
  lend(): () => Promise<void> {
    this.release();
    let back: Promise<void> | null = null;
    return () =>
      (back ??= this.tryAcquire() ? Promise.resolve() : new Promise<void>((resolve) => this.waiting.unshift(resolve)));
  }

  release(): void {
    const next = this.waiting.shift();
    if (next) next();
    else {
      this.free++;
      this.onFree?.();
    }
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
