import { Inject, Injectable, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { TransactionRunner } from '@runline/db';
import type { Logger } from '@runline/observability';
import { LOGGER } from '@runline/runtime';
import { DeadLetterConfig } from '../config.js';
import { interruptedReplays, recordReplay } from './dead-letters.repository.js';
import { ReplayRuns } from './replay-runs.js';

const BATCH = 100;

/**
 * Finishes replays cut off between their claim and their outcome (a crash, a lost database):
 * at start and every DEAD_LETTER_REPLAY_RECOVERY_INTERVAL_MS it takes the events claimed longer
 * ago than a replay may take and asks for their run again with the same key. That finds the run
 * if it was made (its outcome, or "still running": asked again next time) or starts it if it
 * was not, so each event still runs once; the outcome is then recorded as SUCCESS or
 * FAILED: <reason>. Replicas may do this at once: the key gives them one run, the first
 * recorded outcome stays.
 */
@Injectable()
export class ReplayRecovery implements OnApplicationBootstrap, OnApplicationShutdown {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<number> | undefined;

  constructor(
    private readonly transactions: TransactionRunner,
    private readonly runs: ReplayRuns,
    @Inject(DeadLetterConfig) private readonly config: DeadLetterConfig,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  onApplicationBootstrap(): void {
    this.timer = setInterval(() => void this.recover(), this.config.DEAD_LETTER_REPLAY_RECOVERY_INTERVAL_MS);
    this.timer.unref();
    void this.recover();
  }

  async onApplicationShutdown(): Promise<void> {
    clearInterval(this.timer);
    await this.running;
  }

  /** One round (or the one in progress): resolves with how many outcomes it recorded. */
  recover(): Promise<number> {
    this.running ??= this.finishInterrupted().finally(() => (this.running = undefined));
    return this.running;
  }

  private async finishInterrupted(): Promise<number> {
    let recorded = 0;
    try {
      const manager = this.transactions.dataSource.manager;
      const claimedBefore = new Date(Date.now() - this.config.DEAD_LETTER_REPLAY_TIMEOUT_MS);
      for (const letter of await interruptedReplays(manager, claimedBefore, BATCH)) {
        const result = await this.runs.run(letter, { publishedVersion: 0, configVersion: 0n });
        // Still running, or the invocation service did not answer: the next round tries again.
        if (result.pending || result.unavailable) continue;
        const status = result.reason === null ? 'SUCCESS' : `FAILED: ${result.reason}`;
        await recordReplay(manager, letter.id, status, result.invocationId || null, new Date());
        this.logger.info({ deadLetterId: letter.id, invocationId: result.invocationId, status }, 'interrupted dead-letter replay finished');
        recorded++;
      }
    } catch (error) {
      this.logger.warn({ err: error }, 'finishing interrupted replays failed; the next round tries again');
    }
    return recorded;
  }
}
