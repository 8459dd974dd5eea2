import { Controller, Inject } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import { BUS, type Bus } from '@runline/bus';
import {
  create,
  DEAD_LETTER_REQUEST_SUBJECTS,
  fromBinary,
  INVOCATION_REQUEST_SUBJECTS,
  ReplayDeadLetterReplySchema,
  ReplayDeadLetterRequestSchema,
  ReplayOutcome,
  RunMode,
  RunTarget,
  StartInvocationReplySchema,
  StartInvocationRequestSchema,
  timestampFromDate,
  toBinary,
  type ReplayDeadLetterReply,
  notStartedReason,
} from '@runline/contracts';
import { TransactionRunner } from '@runline/db';
import type { Logger } from '@runline/observability';
import { LOGGER, SecretBox } from '@runline/runtime';
import { DeadLetterConfig } from '../config.js';
import { claimReplay, deadLetterExists, recordReplay, type DeadLetterRow } from '../dead-letters/dead-letters.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Replays an event at most once: a conditional UPDATE claims it (replayed_at set) before
 * anything runs, so of concurrent requests exactly one runs it and the others hear "already
 * replayed". The run is a sync run of the stored payload (trigger source REPLAY) and its outcome
 * becomes replayStatus: SUCCESS, or FAILED: <reason>. A replay that cannot be started at all
 * (invocation service unreachable) is a failed replay too: the spec allows one attempt.
 */
@Controller()
export class ReplayDeadLetterHandler {
  constructor(
    private readonly transactions: TransactionRunner,
    @Inject(BUS) private readonly bus: Bus,
    @Inject(SecretBox) private readonly secrets: SecretBox,
    @Inject(DeadLetterConfig) private readonly config: DeadLetterConfig,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  @MessagePattern(DEAD_LETTER_REQUEST_SUBJECTS.REPLAY_DEAD_LETTER)
  async execute(@Payload() data: Uint8Array): Promise<Uint8Array> {
    const request = fromBinary(ReplayDeadLetterRequestSchema, data);
    return toBinary(ReplayDeadLetterReplySchema, await this.replay(request.projectId, request.id, { publishedVersion: request.publishedVersion, configVersion: request.configVersion }));
  }

  private async replay(projectId: string, id: string, versions: ProjectVersions): Promise<ReplayDeadLetterReply> {
    const manager = this.transactions.dataSource.manager;
    if (!UUID.test(id)) return create(ReplayDeadLetterReplySchema, { outcome: ReplayOutcome.NOT_FOUND });
    const claimed = await this.transactions.run((tx) => claimReplay(tx.manager, projectId, id, new Date()));
    if (!claimed) {
      const outcome = (await deadLetterExists(manager, projectId, id)) ? ReplayOutcome.ALREADY_REPLAYED : ReplayOutcome.NOT_FOUND;
      return create(ReplayDeadLetterReplySchema, { outcome });
    }
    const { reason, invocationId } = await this.run(claimed, versions);
    await recordReplay(manager, id, reason === null ? 'SUCCESS' : `FAILED: ${reason}`, invocationId || null, new Date());
    this.logger.info({ deadLetterId: id, invocationId, reason }, 'dead letter replayed');
    return reason === null
      ? create(ReplayDeadLetterReplySchema, { outcome: ReplayOutcome.SUCCEEDED, invocationId })
      : create(ReplayDeadLetterReplySchema, { outcome: ReplayOutcome.FAILED, reason, invocationId });
  }

  /** The sync run of the stored payload: null reason on success. */
  private async run(letter: DeadLetterRow, { publishedVersion, configVersion }: ProjectVersions): Promise<{ reason: string | null; invocationId: string }> {
    const request = create(StartInvocationRequestSchema, {
      orgId: letter.org_id,
      projectId: letter.project_id,
      tokenId: '',
      target: letter.run_target === 'AUTOMATION' ? RunTarget.AUTOMATION : RunTarget.FLOW,
      mode: RunMode.SYNC,
      bodyJson: this.secrets.open(letter.sealed_payload),
      // One replay per event, so the event id is a key no other request uses.
      idempotencyKey: `replay-${letter.id}`,
      publishedVersion,
      configVersion,
      receivedAt: timestampFromDate(new Date()),
      triggerSource: 'REPLAY',
    });
    try {
      const reply = fromBinary(
        StartInvocationReplySchema,
        await this.bus.request(INVOCATION_REQUEST_SUBJECTS.START_INVOCATION, toBinary(StartInvocationRequestSchema, request), {
          timeoutMs: this.config.DEAD_LETTER_REPLAY_TIMEOUT_MS,
        }),
      );
      const notStarted = notStartedReason(reply);
      if (notStarted !== null) return { reason: notStarted, invocationId: '' };
      if (reply.status === 'SUCCEEDED') return { reason: null, invocationId: reply.invocationId };
      return { reason: reply.errorMessage || `Run ended ${reply.status}`, invocationId: reply.invocationId };
    } catch (error) {
      return { reason: `The run could not be started: ${error instanceof Error ? error.message : String(error)}`, invocationId: '' };
    }
  }
}

/** What the gateway knew of the project when it asked for the replay; the run is never older. */
interface ProjectVersions {
  publishedVersion: number;
  configVersion: bigint;
}
