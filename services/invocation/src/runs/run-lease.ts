import { Inject, Injectable } from '@nestjs/common';
import { instanceIdentity } from '@runline/runtime';
import { InvocationConfig } from '../config.js';
import type { Lease } from '../lifecycle/run-lifecycle.js';

/**
 * How long a just-leased run is left to this process before its own sweeper may end it after
 * all (it never came to execute: the claim did not commit, or failed): ISSUED_GRACE_LEASES
 * leases, and never less than ISSUED_GRACE_MIN_MS. Only a stuck start waits that long; a short
 * lease (the fault lab's 1.5 s) must not make a slow claim on a starved machine end its own run
 * (the fault suite saw 24 runs "interrupted" in its scheduler phase at load 8-10, no invocation
 * process having died). Another replica's sweeper still takes the run after the lease if this
 * process is dead.
 */
const ISSUED_GRACE_LEASES = 4;
const ISSUED_GRACE_MIN_MS = 60_000;

/**
 * This process as the holder of the runs it executes. A RUNNING run carries its holder's lease,
 * renewed while it runs, so the sweeper can tell a dead process's runs from slow ones.
 *
 * It also knows which runs this process is executing right now. A lease can lapse while its
 * process is alive: the event loop stalled past a renewal (a starved CPU), or the run's first
 * commit took most of the lease. Another process cannot tell that from death, but this one can:
 * its own sweeper never ends a run it is executing (`executingIds`), nor one it has just issued a
 * lease for: between the lease's issue and the execution's first renewal lies the commit that
 * makes the run RUNNING, which a starved process or a busy pool can make longer than the lease.
 */
@Injectable()
export class RunLease {
  /** Identifies this instance as a lease owner (and, with a run's id, as a bot session turn's holder). */
  readonly owner = instanceIdentity();
  private readonly executing = new Map<string, number>();
  /** Runs given a lease here and not executing yet, with when to stop counting them (ms). */
  private readonly issued = new Map<string, number>();

  constructor(@Inject(InvocationConfig) private readonly config: InvocationConfig) {}

  /**
   * A fresh lease for run `id`, which this process starts now. Its own sweeper leaves the run
   * alone until its execution holds it, or for the grace above if it never does.
   */
  next(id: string): Lease {
    const now = Date.now();
    this.issued.set(id, now + Math.max(ISSUED_GRACE_LEASES * this.config.RUN_LEASE_MS, ISSUED_GRACE_MIN_MS));
    return { owner: this.owner, expiresAt: new Date(now + this.config.RUN_LEASE_MS) };
  }

  /** True when a lease that expires at `expiresAt` has less than two thirds of its length left: renew it before anything else. */
  isSpent(expiresAt: Date): boolean {
    return expiresAt.getTime() - Date.now() < (this.config.RUN_LEASE_MS * 2) / 3;
  }

  /** Marks run `id` as executing in this process until the returned function is called. */
  hold(id: string): () => void {
    this.issued.delete(id);
    this.executing.set(id, (this.executing.get(id) ?? 0) + 1);
    return () => {
      const count = (this.executing.get(id) ?? 1) - 1;
      if (count > 0) this.executing.set(id, count);
      else this.executing.delete(id);
    };
  }

  /** The runs this process is executing now, or has just leased and is about to execute. */
  executingIds(): string[] {
    const now = Date.now();
    for (const [id, until] of this.issued) if (until <= now) this.issued.delete(id);
    return [...this.executing.keys(), ...this.issued.keys()];
  }
}
