import { Inject, Injectable, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { TransactionRunner } from '@runline/db';
import type { Logger } from '@runline/observability';
import { LOGGER, SecretBox } from '@runline/runtime';
import { InvocationConfig } from '../config.js';
import type { InvocationEventData } from '../events/invocation-event.js';
import { readInvocation, returnedRows, transition } from './invocation-store.js';
import { runInvocationCommand } from './run-commands.js';
import { RunExecutor } from './run-executor.js';
import { retriesAutomatically, type RunPlan } from './run-plan.js';

const BATCH = 100;

/**
 * The durable timers of runs, on the database clock of record (rows, not memory), so a restart
 * loses nothing and replicas share the work (`SKIP LOCKED`):
 * - a RUNNING run whose lease expired belonged to a process that died: it ends FAILED as
 *   interrupted (an async automation with attempts left is retried instead);
 * - a QUEUED run whose retry time came is dispatched again (RunInvocation command).
 */
@Injectable()
export class RunSweeper implements OnApplicationBootstrap, OnApplicationShutdown {
  private timer: NodeJS.Timeout | undefined;
  private sweeping: Promise<void> | undefined;

  constructor(
    private readonly transactions: TransactionRunner,
    private readonly executor: RunExecutor,
    @Inject(SecretBox) private readonly secrets: SecretBox,
    @Inject(InvocationConfig) private readonly config: InvocationConfig,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  onApplicationBootstrap(): void {
    this.timer = setInterval(() => {
      this.sweeping ??= this.sweep()
        .catch((error: unknown) => this.logger.warn({ err: error }, 'run sweep failed; retrying on the next tick'))
        .finally(() => (this.sweeping = undefined));
    }, this.config.RUN_SWEEP_INTERVAL_MS);
    this.timer.unref();
  }

  async onApplicationShutdown(): Promise<void> {
    clearInterval(this.timer);
    await this.sweeping;
  }

  async sweep(): Promise<void> {
    await this.endInterruptedRuns();
    await this.dispatchDueRetries();
  }

  private async endInterruptedRuns(): Promise<void> {
    const ended = await this.transactions.run(async (tx) => {
      const expired: Array<{ id: string; lease_owner: string }> = await tx.manager.query(
        `SELECT id, lease_owner FROM invocations
          WHERE status = 'RUNNING' AND lease_expires_at < $1
          ORDER BY lease_expires_at LIMIT ${BATCH} FOR UPDATE SKIP LOCKED`,
        [new Date()],
      );
      for (const { id, lease_owner: owner } of expired) {
        const row = await readInvocation(tx.manager, id);
        if (!row) continue;
        const plan = JSON.parse(this.secrets.open(row.sealedPlan)) as RunPlan;
        const reason = 'Run was interrupted: the process running it stopped before it finished';
        const retries = retriesAutomatically(plan);
        const expected = { status: 'RUNNING' as const, leaseOwner: owner };
        if (retries && row.attempt < row.maxAttempts) {
          const retryAt = new Date();
          await transition(tx, id, expected, { status: 'QUEUED', lease: null, runAfter: retryAt }, [
            { type: 'InvocationRetryScheduled', failedAttempt: row.attempt, errorMessage: reason, retryAt: retryAt.toISOString(), steps: [], trace: null },
          ]);
          continue;
        }
        const events: InvocationEventData[] = [
          { type: 'InvocationFailed', errorMessage: reason, kind: 'INTERRUPTED', attempt: row.attempt, steps: [], trace: null, durationMs: 0 },
        ];
        if (retries) events.push(this.executor.exhausted(plan, row.attempt, reason));
        await transition(tx, id, expected, { status: 'FAILED', lease: null }, events);
      }
      return expired.length;
    });
    if (ended > 0) this.logger.warn({ count: ended }, 'ended runs whose process stopped (lease expired)');
  }

  private async dispatchDueRetries(): Promise<void> {
    await this.transactions.run(async (tx) => {
      const due = returnedRows<{ id: string; org_id: string; project_id: string }>(
        await tx.manager.query(
          `UPDATE invocations SET run_after = NULL
            WHERE id IN (SELECT id FROM invocations WHERE status = 'QUEUED' AND run_after <= $1
                          ORDER BY run_after LIMIT ${BATCH} FOR UPDATE SKIP LOCKED)
            RETURNING id, org_id, project_id`,
          [new Date()],
        ),
      );
      for (const row of due) tx.emit(runInvocationCommand({ id: row.id, orgId: row.org_id, projectId: row.project_id }));
    });
  }
}
