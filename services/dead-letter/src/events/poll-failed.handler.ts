import { Controller, Inject } from '@nestjs/common';
import { EventPattern, Payload } from '@nestjs/microservices';
import { EVENT_TYPES, POLLING_EVENT_SUBJECTS, unpackPayloadAs, type Envelope } from '@runline/contracts';
import { TransactionRunner } from '@runline/db';
import { SecretBox } from '@runline/runtime';
import { recordDeadLetterOnce, runTargetOf } from '../dead-letters/dead-letter-inbox.js';

/** Inbox consumer name. Persistent: renaming it forgets what was processed. */
const CONSUMER = 'dead-letter.poll-failed';

/**
 * A failed poll becomes a dead letter of target type polling holding pollKey and pollEndpoint,
 * whatever the project type (the run target says what a replay would run).
 */
@Controller()
export class PollFailedHandler {
  constructor(
    private readonly transactions: TransactionRunner,
    @Inject(SecretBox) private readonly secrets: SecretBox,
  ) {}

  @EventPattern<string>(POLLING_EVENT_SUBJECTS.POLL_FAILED)
  async handle(@Payload() envelope: Envelope): Promise<void> {
    const event = unpackPayloadAs(envelope, EVENT_TYPES.POLL_FAILED);
    const payload = { pollKey: event.pollKey, pollEndpoint: event.pollEndpoint };
    await recordDeadLetterOnce(this.transactions, CONSUMER, envelope, {
      originKey: `poll-failed:${envelope.id}`,
      source: event.source,
      targetType: 'polling',
      triggerKey: event.pollKey,
      runTarget: runTargetOf(event.runTarget),
      displayPayload: null,
      sealedPayload: this.secrets.seal(JSON.stringify(payload)),
      failureReason: event.failureReason,
      attemptCount: 1,
      invocationId: null,
    });
  }
}
