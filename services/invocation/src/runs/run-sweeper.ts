import { Inject, Injectable, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { TransactionRunner } from '@runline/db';
import type { Logger } from '@runline/observability';
import { LOGGER, SecretBox } from '@runline/runtime';
import { InvocationConfig } from '../config.js';
import { interruptedEnding } from '../lifecycle/run-endings.js';
import { historyAppend } from '../lifecycle/run-history.js';
import type { RunPlan } from '../lifecycle/run-plan.js';
import { RunLease } from './run-lease.js';
import { expiredLeases, readInvocation } from './run-reads.repository.js';
import { transition } from './run-transitions.repository.js';

const BATCH = 100;

/**
 * Ends runs whose process died, from rows (not memory), so a restart loses nothing and
 * replicas share the work (`SKIP LOCKED`): a RUNNING run whose lease expired ends FAILED as
 * interrupted; an async automation with attempts left is retried instead (at once, through
 * the scheduler like every retry).
 *
 * A lease also expires while the database is out of reach, for every process at once: nobody
 * can renew. So after a sweep fails, the next sweep waits until the database answers again and
 * then a whole lease more. Every live process renews its leases within a third of a lease, so
 * what is still expired then belongs to a process that really died, and a run whose process
 * was only waiting for the database is never ended as interrupted.
 */
@Injectable()
export class RunSweeper implements OnApplicationBootstrap, OnApplicationShutdown {
  private timer: NodeJS.Timeout | undefined;
  private sweeping: Promise<void> | undefined;
  /** Set when a sweep failed: the database must answer, then a lease must pass, before the next. */
  private databaseLost = false;
  private pausedUntil = 0;

  constructor(
    private readonly transactions: TransactionRunner,
    private readonly lease: RunLease,
    @Inject(SecretBox) private readonly secrets: SecretBox,
    @Inject(InvocationConfig) private readonly config: InvocationConfig,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  onApplicationBootstrap(): void {
    this.timer = setInterval(() => {
      this.sweeping ??= this.tick().finally(() => (this.sweeping = undefined));
    }, this.config.RUN_SWEEP_INTERVAL_MS);
    this.timer.unref();
  }

  async onApplicationShutdown(): Promise<void> {
    clearInterval(this.timer);
    await this.sweeping;
  }

  private async tick(): Promise<void> {
    try {
      if (this.databaseLost) {
        await this.transactions.run((tx) => tx.manager.query('SELECT 1'));
        this.databaseLost = false;
        this.pausedUntil = Date.now() + this.config.RUN_LEASE_MS;
        this.logger.info({ resumesInMs: this.config.RUN_LEASE_MS }, 'database answers again; sweeping resumes after one lease, once live processes renewed theirs');
      }
      if (Date.now() < this.pausedUntil) return;
      await this.sweep();
    } catch (error) {
      this.databaseLost = true;
      this.logger.warn({ err: error }, 'run sweep failed; waiting for the database, then one lease, before the next');
    }
  }

  async sweep(): Promise<void> {
    const ended = await this.transactions.run(async (tx) => {
      const expired = await expiredLeases(tx.manager, BATCH, { owner: this.lease.owner, executing: this.lease.executingIds() });
      for (const { id, lease_owner: owner } of expired) {
        const row = await readInvocation(tx.manager, id);
        if (!row) continue;
        const plan = JSON.parse(this.secrets.open(row.sealedPlan)) as RunPlan;
        const ending = interruptedEnding(row, plan, owner, this.secrets);
        await transition(tx, id, ending.expected, ending.change, historyAppend(ending));
      }
      return expired.length;
    });
    if (ended > 0) this.logger.warn({ count: ended }, 'ended runs whose process stopped (lease expired)');
  }
}
