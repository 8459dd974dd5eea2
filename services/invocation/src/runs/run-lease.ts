import { Inject, Injectable } from '@nestjs/common';
import { instanceIdentity } from '@runline/runtime';
import { InvocationConfig } from '../config.js';
import type { Lease } from '../lifecycle/run-lifecycle.js';

/**
 * This process as the holder of the runs it executes. A RUNNING run carries its holder's lease,
 * renewed while it runs, so the sweeper can tell a dead process's runs from slow ones.
 *
 * It also knows which runs this process is executing right now. A lease can lapse while its
 * process is alive: the event loop stalled past a renewal (a starved CPU), or the run's first
 * commit took most of the lease. Another process cannot tell that from death, but this one can:
 * its own sweeper never ends a run it is executing (`executingIds`).
 */
@Injectable()
export class RunLease {
  /** Identifies this instance as a lease owner (and, with a run's id, as a bot session turn's holder). */
  readonly owner = instanceIdentity();
  private readonly executing = new Map<string, number>();

  constructor(@Inject(InvocationConfig) private readonly config: InvocationConfig) {}

  /** A fresh lease for a run this process starts now. */
  next(): Lease {
    return { owner: this.owner, expiresAt: new Date(Date.now() + this.config.RUN_LEASE_MS) };
  }

  /** True when a lease that expires at `expiresAt` has less than two thirds of its length left: renew it before anything else. */
  isSpent(expiresAt: Date): boolean {
    return expiresAt.getTime() - Date.now() < (this.config.RUN_LEASE_MS * 2) / 3;
  }

  /** Marks run `id` as executing in this process until the returned function is called. */
  hold(id: string): () => void {
    this.executing.set(id, (this.executing.get(id) ?? 0) + 1);
    return () => {
      const count = (this.executing.get(id) ?? 1) - 1;
      if (count > 0) this.executing.set(id, count);
      else this.executing.delete(id);
    };
  }

  /** The runs this process is executing now. */
  executingIds(): string[] {
    return [...this.executing.keys()];
  }
}
