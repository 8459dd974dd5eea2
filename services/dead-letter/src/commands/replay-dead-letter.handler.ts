import { Controller } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import {
  create,
  DEAD_LETTER_REQUEST_SUBJECTS,
  fromBinary,
  isUuid,
  ReplayDeadLetterReplySchema,
  ReplayDeadLetterRequestSchema,
  ReplayOutcome,
  toBinary,
  type ReplayDeadLetterReply,
} from '@runline/contracts';
import { TransactionRunner } from '@runline/db';
import { ClaimedReplays } from '../dead-letters/claimed-replays.js';
import { claimReplay, deadLetterExists } from '../dead-letters/dead-letters.repository.js';
import type { ReplayVersions } from '../dead-letters/replay-runs.js';

/**
 * Replays an event at most once: a conditional UPDATE claims it (replayed_at set) before
 * anything runs, so of concurrent requests exactly one runs it and the others hear "already
 * replayed". The run is a sync run of the stored payload (trigger source REPLAY) and its outcome
 * becomes replayStatus: SUCCESS, or FAILED: <reason>. A replay the invocation service does not
 * answer is no replay: the claim is given back and the caller told to retry (its run's
 * idempotency key finds the run should one have started). A replay cut off between its claim
 * and its outcome is finished by ReplayRecovery.
 */
@Controller()
export class ReplayDeadLetterHandler {
  constructor(
    private readonly transactions: TransactionRunner,
    private readonly replays: ClaimedReplays,
  ) {}

  @MessagePattern(DEAD_LETTER_REQUEST_SUBJECTS.REPLAY_DEAD_LETTER)
  async execute(@Payload() data: Uint8Array): Promise<Uint8Array> {
    const request = fromBinary(ReplayDeadLetterRequestSchema, data);
    return toBinary(ReplayDeadLetterReplySchema, await this.replay(request.projectId, request.id, { publishedVersion: request.publishedVersion, configVersion: request.configVersion }));
  }

  private async replay(projectId: string, id: string, versions: ReplayVersions): Promise<ReplayDeadLetterReply> {
    if (!isUuid(id)) return create(ReplayDeadLetterReplySchema, { outcome: ReplayOutcome.NOT_FOUND });
    const claimed = await this.transactions.run((tx) => claimReplay(tx.manager, projectId, id, new Date()));
    if (!claimed) {
      const exists = await deadLetterExists(this.transactions.dataSource.manager, projectId, id);
      return create(ReplayDeadLetterReplySchema, { outcome: exists ? ReplayOutcome.ALREADY_REPLAYED : ReplayOutcome.NOT_FOUND });
    }
    const result = await this.replays.finish(claimed, versions);
    // A first replay never finds its run in progress; should it, the recovery finishes it.
    if (result.pending) return create(ReplayDeadLetterReplySchema, { outcome: ReplayOutcome.SUCCEEDED });
    if (result.unavailable) return create(ReplayDeadLetterReplySchema, { outcome: ReplayOutcome.INVOCATION_UNAVAILABLE });
    const { reason, invocationId } = result;
    return reason === null
      ? create(ReplayDeadLetterReplySchema, { outcome: ReplayOutcome.SUCCEEDED, invocationId })
      : create(ReplayDeadLetterReplySchema, { outcome: ReplayOutcome.FAILED, reason, invocationId });
  }
}
