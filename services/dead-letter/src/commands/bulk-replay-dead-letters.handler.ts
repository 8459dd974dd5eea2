import { setTimeout as sleep } from 'node:timers/promises';
import { Controller, Inject } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import {
  BulkReplayDeadLettersReplySchema,
  BulkReplayDeadLettersRequestSchema,
  create,
  DEAD_LETTER_REQUEST_SUBJECTS,
  fromBinary,
  timestampDate,
  toBinary,
  type BulkReplayDeadLettersRequest,
} from '@runline/contracts';
import { TransactionRunner } from '@runline/db';
import type { Logger } from '@runline/observability';
import { LOGGER } from '@runline/runtime';
import { DeadLetterConfig } from '../config.js';
import { ClaimedReplays } from '../dead-letters/claimed-replays.js';
import { claimNextUnreplayed, countUnreplayed, type BulkReplayFilter } from '../dead-letters/dead-letters.repository.js';
import type { ReplayVersions } from '../dead-letters/replay-runs.js';

/** What one bulk request did; `pending` = claimed - succeeded - failed at the moment it answers. */
interface Tally {
  /** Claims sent or done: held to the cap. */
  reserved: number;
  claimed: number;
  succeeded: number;
  failed: number;
  /** The invocation service did not answer a replay: no lane claims another event. */
  unavailable: boolean;
  /** Claim statements in flight: the answer waits for them, so every event claimed is counted. */
  claiming: Set<Promise<unknown>>;
}

/**
 * Replays the project's unreplayed events matching a filter, oldest first, each at most once:
 * every event is claimed with the single replay's claim (replayed_at set by one conditional
 * statement, rows held by another claim skipped), so bulk and single replays that overlap never
 * run an event twice. Bounded: at most DEAD_LETTER_BULK_REPLAY_MAX_EVENTS events per request,
 * DEAD_LETTER_BULK_REPLAY_CONCURRENCY at a time, and no replay starts after the caller's budget;
 * the answer comes by the budget, replays still running then record their outcome when they
 * end (`pending`), and the events left are counted in `remaining` for the next request.
 */
@Controller()
export class BulkReplayDeadLettersHandler {
  constructor(
    private readonly transactions: TransactionRunner,
    private readonly replays: ClaimedReplays,
    @Inject(DeadLetterConfig) private readonly config: DeadLetterConfig,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  @MessagePattern(DEAD_LETTER_REQUEST_SUBJECTS.BULK_REPLAY_DEAD_LETTERS)
  async execute(@Payload() data: Uint8Array): Promise<Uint8Array> {
    const request = fromBinary(BulkReplayDeadLettersRequestSchema, data);
    const filter = filterOf(request);
    const manager = this.transactions.dataSource.manager;
    if (request.dryRun) {
      return toBinary(BulkReplayDeadLettersReplySchema, create(BulkReplayDeadLettersReplySchema, { matched: await countUnreplayed(manager, filter) }));
    }
    const budgetMs = request.budgetMs > 0 ? request.budgetMs : this.config.DEAD_LETTER_REPLAY_TIMEOUT_MS;
    const deadline = Date.now() + budgetMs;
    const versions: ReplayVersions = { publishedVersion: request.publishedVersion, configVersion: request.configVersion };
    const tally: Tally = { reserved: 0, claimed: 0, succeeded: 0, failed: 0, unavailable: false, claiming: new Set() };
    const workers = Array.from({ length: this.config.DEAD_LETTER_BULK_REPLAY_CONCURRENCY }, () => this.work(filter, versions, deadline, tally));
    const finished = Promise.all(workers);
    const timer = new AbortController();
    // Past the budget the answer goes out; the replays in flight go on and record their outcome.
    await Promise.race([finished, sleep(Math.max(0, deadline - Date.now()), undefined, { signal: timer.signal }).catch(() => undefined)]);
    timer.abort();
    await Promise.allSettled([...tally.claiming]);
    const answered = { claimed: tally.claimed, succeeded: tally.succeeded, failed: tally.failed };
    const remaining = await countUnreplayed(manager, filter);
    this.logger.info({ projectId: request.projectId, ...answered, remaining }, 'bulk dead-letter replay answered');
    return toBinary(
      BulkReplayDeadLettersReplySchema,
      create(BulkReplayDeadLettersReplySchema, {
        matched: answered.claimed,
        succeeded: answered.succeeded,
        failed: answered.failed,
        pending: answered.claimed - answered.succeeded - answered.failed,
        remaining,
        invocationUnavailable: tally.unavailable && answered.claimed === 0,
      }),
    );
  }

  /** One lane: claims and replays events one after another until none is left, the cap or the deadline. */
  private async work(filter: BulkReplayFilter, versions: ReplayVersions, deadline: number, tally: Tally): Promise<void> {
    const manager = this.transactions.dataSource.manager;
    while (!tally.unavailable && Date.now() < deadline && tally.reserved < this.config.DEAD_LETTER_BULK_REPLAY_MAX_EVENTS) {
      // Reserved before the claim, so lanes together never claim more than the cap.
      tally.reserved++;
      const claim = claimNextUnreplayed(manager, filter, new Date());
      tally.claiming.add(claim);
      let letter;
      try {
        letter = await claim;
      } catch (error) {
        this.logger.warn({ err: error, projectId: filter.projectId }, 'bulk replay could not claim an event; the rest is left for the next request');
        return;
      } finally {
        tally.claiming.delete(claim);
      }
      if (!letter) return;
      tally.claimed++;
      try {
        const result = await this.replays.finish(letter, versions);
        if (result.unavailable) {
          // Given back unreplayed (ClaimedReplays): not this request's; the rest waits too.
          tally.claimed--;
          tally.unavailable = true;
          return;
        }
        // A run found in progress (only after a crash) is finished by the recovery: counted pending.
        if (!result.pending) {
          if (result.reason === null) tally.succeeded++;
          else tally.failed++;
        }
      } catch (error) {
        // The outcome could not be recorded: the recovery finishes the claimed replay later.
        this.logger.warn({ err: error, deadLetterId: letter.id }, 'bulk replay could not record an outcome; the recovery finishes it');
      }
    }
  }
}

function filterOf(request: BulkReplayDeadLettersRequest): BulkReplayFilter {
  return {
    projectId: request.projectId,
    source: request.source || null,
    targetType: request.targetType || null,
    from: request.from ? timestampDate(request.from) : null,
    to: request.to ? timestampDate(request.to) : null,
  };
}
