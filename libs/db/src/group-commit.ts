/**
 * Group commit: requests that arrive while earlier ones are being written share the next
 * transaction. One request alone is written at once (no timer, no added latency); under load
 * each transaction carries many (runs accepted, callback attempts recorded).
 */
export type BatchWriter<TItem, TResult> = (items: TItem[]) => Promise<TResult[]>;

interface Pending<TItem, TResult> {
  item: TItem;
  resolve: (result: TResult) => void;
  reject: (error: unknown) => void;
}

export class GroupCommit<TItem, TResult> {
  private queue: Array<Pending<TItem, TResult>> = [];
  private inFlight = 0;
  private flushScheduled = false;

  /**
   * @param write writes a batch in one transaction; returns one result per item, in order.
   * @param maxConcurrent transactions in flight at once (connections used).
   * @param maxBatch items per transaction.
   * @param gatherTurn write what arrives in one turn of the event loop together (at
   *   `setImmediate`), the first item too, instead of the first at once: under load a burst of
   *   requests read off one socket shares a statement (the run recorder: 10-15% lower accept
   *   latency at 1,000-1,200 runs/s, bench/README.md "Session 12"); idle, it costs the rest of
   *   the turn.
   */
  constructor(
    private readonly write: BatchWriter<TItem, TResult>,
    private readonly maxConcurrent = 4,
    private readonly maxBatch = 256,
    private readonly gatherTurn = false,
  ) {}

  submit(item: TItem): Promise<TResult> {
    return new Promise<TResult>((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      if (!this.gatherTurn) this.flush();
      else if (!this.flushScheduled) {
        this.flushScheduled = true;
        setImmediate(() => {
          this.flushScheduled = false;
          this.flush();
        });
      }
    });
  }

  private flush(): void {
    while (this.inFlight < this.maxConcurrent && this.queue.length > 0) {
      const batch = this.queue.splice(0, this.maxBatch);
      this.inFlight++;
      void this.writeBatch(batch).finally(() => {
        this.inFlight--;
        this.flush();
      });
    }
  }

  private async writeBatch(batch: Array<Pending<TItem, TResult>>): Promise<void> {
    try {
      const results = await this.write(batch.map((pending) => pending.item));
      if (results.length !== batch.length) throw new Error(`batch writer returned ${results.length} results for ${batch.length} items`);
      batch.forEach((pending, index) => pending.resolve(results[index]));
    } catch (error) {
      for (const pending of batch) pending.reject(error);
    }
  }
}
