import { Controller } from '@nestjs/common';
import { EventPattern, Payload } from '@nestjs/microservices';
import { EVENT_TYPES, POLLING_EVENT_SUBJECTS, unpackPayloadAs, type Envelope } from '@runline/contracts';
import { TransactionRunner } from '@runline/db';
import { recordDeadLetterOnce, runTargetOf } from '../dead-letters/dead-letter-inbox.js';

/** Inbox consumer name. Persistent: renaming it forgets what was processed. */
const CONSUMER = 'dead-letter.polled-item-run-failed';

/**
 * A polled item whose run failed becomes a dead letter of target type polling holding the item
 * (as the run got it as its payload: its fields plus source and _pollKey), whatever the project
 * type; the run target (a chatbot's flow or an automation's workflow) is what a replay runs. One
 * per failed run: a poll retried after a crash reports the same run again.
 */
@Controller()
export class PolledItemRunFailedHandler {
  constructor(private readonly transactions: TransactionRunner) {}

  @EventPattern<string>(POLLING_EVENT_SUBJECTS.POLLED_ITEM_RUN_FAILED)
  async handle(@Payload() envelope: Envelope): Promise<void> {
    const event = unpackPayloadAs(envelope, EVENT_TYPES.POLLED_ITEM_RUN_FAILED);
    await recordDeadLetterOnce(this.transactions, CONSUMER, envelope, {
      originKey: event.invocationId ? `run:${event.invocationId}` : `item:${envelope.id}`,
      source: event.source,
      targetType: 'polling',
      triggerKey: event.pollKey,
      runTarget: runTargetOf(event.runTarget),
      displayPayload: null,
      sealedPayload: event.sealedPayloadJson,
      failureReason: event.failureReason,
      attemptCount: 1,
      invocationId: event.invocationId || null,
    });
  }
}
