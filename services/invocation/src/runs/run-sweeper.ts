import { Inject, Injectable, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { JobKind } from '@runline/contracts';
import { TransactionRunner } from '@runline/db';
import type { Logger } from '@runline/observability';
import { LOGGER, SecretBox } from '@runline/runtime';
import { InvocationConfig } from '../config.js';
import type { InvocationEventData } from '../events/invocation-event.js';
import { callbackTargetOf } from './callback-request.js';
import { readInvocation, transition } from './invocation-store.js';
import { RunExecutor } from './run-executor.js';
import { retriesAutomatically, type RunPlan } from './run-plan.js';
import { jobNames, waitForJob } from './scheduler-jobs.js';

const BATCH = 100;

/**
 * Ends runs whose process died, from rows (not memory), so a restart loses nothing and
 * replicas share the work (`SKIP LOCKED`): a RUNNING run whose lease expired ends FAILED as
 * interrupted; an async automation with attempts left is retried instead (at once, through
 * the scheduler like every retry).
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
          const wait = waitForJob(JobKind.RETRY_RUN, jobNames.retry(row.id, row.attempt), row, retryAt);
          await transition(
            tx,
            id,
            expected,
            { status: 'QUEUED', lease: null, runAfter: retryAt, waitingJob: wait.name },
            [{ type: 'InvocationRetryScheduled', failedAttempt: row.attempt, errorMessage: reason, retryAt: retryAt.toISOString(), steps: [], trace: null }],
            [wait.command],
          );
          continue;
        }
        const events: InvocationEventData[] = [
          { type: 'InvocationFailed', errorMessage: reason, kind: 'INTERRUPTED', attempt: row.attempt, steps: [], trace: null, durationMs: 0 },
        ];
        if (retries) events.push(this.executor.exhausted(plan, row.attempt, reason));
        await transition(tx, id, expected, { status: 'FAILED', lease: null, callback: callbackTargetOf(plan, this.secrets) }, events);
      }
      return expired.length;
    });
    if (ended > 0) this.logger.warn({ count: ended }, 'ended runs whose process stopped (lease expired)');
  }
}
