import { Controller } from '@nestjs/common';
import { EventPattern, Payload } from '@nestjs/microservices';
import { EVENT_TYPES, INVOCATION_EVENT_SUBJECTS, unpackPayloadAs, type Envelope } from '@runline/contracts';
import { TransactionRunner } from '@runline/db';
import { recordDeadLetterOnce } from '../dead-letters/dead-letter-inbox.js';

/** Inbox consumer name. Persistent: renaming it forgets what was processed. */
const CONSUMER = 'dead-letter.invocation-retries-exhausted';

/**
 * An automation run that failed after all its attempts becomes a dead letter of target type
 * FLOW holding the original request (sealed for replay, shown redacted).
 */
@Controller()
export class InvocationRetriesExhaustedHandler {
  constructor(private readonly transactions: TransactionRunner) {}

  @EventPattern<string>(INVOCATION_EVENT_SUBJECTS.INVOCATION_RETRIES_EXHAUSTED)
  async handle(@Payload() envelope: Envelope): Promise<void> {
    const event = unpackPayloadAs(envelope, EVENT_TYPES.INVOCATION_RETRIES_EXHAUSTED);
    await recordDeadLetterOnce(this.transactions, CONSUMER, envelope, {
      originKey: `run:${envelope.invocationId || envelope.id}`,
      source: event.source || 'automation',
      targetType: event.targetType || 'FLOW',
      triggerKey: event.triggerKey,
      runTarget: 'AUTOMATION',
      displayPayload: JSON.parse(event.requestPayloadJson || '{}') as unknown,
      sealedPayload: event.sealedRequestJson,
      failureReason: event.failureReason,
      attemptCount: event.attemptCount,
      invocationId: envelope.invocationId || null,
    });
  }
}
