import { Inject, Injectable } from '@nestjs/common';
import { BUS, isUnanswered, type Bus } from '@runline/bus';
import {
  create,
  fromBinary,
  INVOCATION_REQUEST_SUBJECTS,
  notStartedReason,
  RunMode,
  RunTarget,
  StartInvocationReplySchema,
  StartInvocationRequestSchema,
  timestampFromDate,
  toBinary,
} from '@runline/contracts';
import { SecretBox } from '@runline/runtime';
import { DeadLetterConfig } from '../config.js';
import type { DeadLetterRow } from './dead-letters.repository.js';

/** What the gateway knew of the project when it asked for the replay; the run is never older. */
export interface ReplayVersions {
  publishedVersion: number;
  configVersion: bigint;
}

/**
 * A replay's end: null reason on success; `pending` when the run it started is still going;
 * `unavailable` when the invocation service did not answer (nothing is known of the run, and its
 * idempotency key makes asking again safe).
 */
export type ReplayResult =
  | { reason: string | null; invocationId: string; pending?: false; unavailable?: false }
  | { pending: true; unavailable?: false }
  | { unavailable: true; pending?: false };

const FINAL = new Set(['SUCCEEDED', 'FAILED', 'TIMEOUT', 'CANCELLED']);

/**
 * The replay's request body. Polling letters keep the item as the run got it as its payload; an
 * automation takes its payload as the body's `payload` (as the polling service sent it), a
 * chatbot's flow as the body itself. Other letters keep the original request body.
 */
export function replayBody(letter: Pick<DeadLetterRow, 'run_target' | 'target_type'>, storedJson: string): string {
  if (letter.run_target === 'AUTOMATION' && letter.target_type === 'polling') return `{"payload":${storedJson}}`;
  return storedJson;
}

/**
 * The one run of a replayed event: a sync run of the stored payload with trigger source REPLAY
 * and the key `replay-<dead letter id>`, so asking again (after a crash) finds the same run
 * instead of starting another.
 */
@Injectable()
export class ReplayRuns {
  constructor(
    @Inject(BUS) private readonly bus: Bus,
    @Inject(SecretBox) private readonly secrets: SecretBox,
    @Inject(DeadLetterConfig) private readonly config: DeadLetterConfig,
  ) {}

  async run(letter: DeadLetterRow, { publishedVersion, configVersion }: ReplayVersions): Promise<ReplayResult> {
    const request = create(StartInvocationRequestSchema, {
      orgId: letter.org_id,
      projectId: letter.project_id,
      tokenId: '',
      target: letter.run_target === 'AUTOMATION' ? RunTarget.AUTOMATION : RunTarget.FLOW,
      mode: RunMode.SYNC,
      bodyJson: replayBody(letter, this.secrets.open(letter.sealed_payload)),
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
      if (reply.idempotentReplay && !FINAL.has(reply.status)) return { pending: true };
      if (reply.status === 'SUCCEEDED') return { reason: null, invocationId: reply.invocationId };
      return { reason: reply.errorMessage || `Run ended ${reply.status}`, invocationId: reply.invocationId };
    } catch (error) {
      if (isUnanswered(error)) return { unavailable: true };
      return { reason: `The run could not be started: ${error instanceof Error ? error.message : String(error)}`, invocationId: '' };
    }
  }
}
