import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { Inject, Injectable } from '@nestjs/common';
import { InvocationConfig } from '../config.js';
import type { Lease } from '../lifecycle/run-lifecycle.js';

/**
 * This process as the holder of the runs it executes. A RUNNING run carries its holder's lease,
 * renewed while it runs, so the sweeper can tell a dead process's runs from slow ones.
 */
@Injectable()
export class RunLease {
  /** Identifies this process as a lease owner. */
  readonly owner = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;

  constructor(@Inject(InvocationConfig) private readonly config: InvocationConfig) {}

  /** A fresh lease for a run this process starts now. */
  next(): Lease {
    return { owner: this.owner, expiresAt: new Date(Date.now() + this.config.RUN_LEASE_MS) };
  }
}
