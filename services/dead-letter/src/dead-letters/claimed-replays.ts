import { Inject, Injectable } from '@nestjs/common';
import { TransactionRunner } from '@runline/db';
import type { Logger } from '@runline/observability';
import { LOGGER } from '@runline/runtime';
import { recordReplay, releaseClaim, type DeadLetterRow } from './dead-letters.repository.js';
import { ReplayRuns, type ReplayResult, type ReplayVersions } from './replay-runs.js';

/**
 * The second half of a replay, shared by the single and the bulk replay: the event is claimed
 * (replayed_at set) by the caller; this runs it and records the outcome, SUCCESS or
 * FAILED: <reason>. A run found still in progress (only after a crash) is left `pending` for
 * ReplayRecovery. When the invocation service does not answer, the claim is given back.
 */
@Injectable()
export class ClaimedReplays {
  constructor(
    private readonly transactions: TransactionRunner,
    private readonly runs: ReplayRuns,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  async finish(letter: DeadLetterRow, versions: ReplayVersions): Promise<ReplayResult> {
    const result = await this.runs.run(letter, versions);
    if (result.pending) return result;
    if (result.unavailable) {
      // Not a replay: nothing is known to have run. The event is given back for another try.
      await releaseClaim(this.transactions.dataSource.manager, letter.id, new Date());
      this.logger.warn({ deadLetterId: letter.id }, 'the invocation service did not answer a replay; the event is not replayed');
      return result;
    }
    const { reason, invocationId } = result;
    await recordReplay(this.transactions.dataSource.manager, letter.id, reason === null ? 'SUCCESS' : `FAILED: ${reason}`, invocationId || null, new Date());
    this.logger.info({ deadLetterId: letter.id, invocationId, reason }, 'dead letter replayed');
    return result;
  }
}
