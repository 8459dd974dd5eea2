import { Controller } from '@nestjs/common';
import { EventPattern, Payload } from '@nestjs/microservices';
import { EVENT_TYPES, unpackPayloadAs, WEBHOOK_EVENT_SUBJECTS, type Envelope } from '@runline/contracts';
import { TransactionRunner } from '@runline/db';
import { recordDeadLetterOnce, runTargetOf } from '../dead-letters/dead-letter-inbox.js';

/** Inbox consumer name. Persistent: renaming it forgets what was processed. */
const CONSUMER = 'dead-letter.hook-delivery-rejected';

/**
 * A delivery to an inbound hook that failed the trigger checks becomes a dead letter of target
 * type `webhook`, source = the hook's name, trigger key = the hook's id, holding the body the
 * run was asked with (sealed) so a replay runs it again once the definition is fixed.
 */
@Controller()
export class HookDeliveryRejectedHandler {
  constructor(private readonly transactions: TransactionRunner) {}

  @EventPattern<string>(WEBHOOK_EVENT_SUBJECTS.HOOK_DELIVERY_REJECTED)
  async handle(@Payload() envelope: Envelope): Promise<void> {
    const event = unpackPayloadAs(envelope, EVENT_TYPES.HOOK_DELIVERY_REJECTED);
    await recordDeadLetterOnce(this.transactions, CONSUMER, envelope, {
      originKey: event.invocationId ? `hook-run:${event.invocationId}` : `hook-delivery:${envelope.id}`,
      source: event.hookName,
      targetType: 'webhook',
      triggerKey: event.hookId,
      runTarget: runTargetOf(event.runTarget),
      displayPayload: null,
      sealedPayload: event.sealedBodyJson,
      failureReason: event.failureReason,
      attemptCount: 1,
      invocationId: event.invocationId || null,
    });
  }
}
