import { randomUUID } from 'node:crypto';
import { Controller, Inject } from '@nestjs/common';
import { EventPattern, Payload } from '@nestjs/microservices';
import { EVENT_TYPES, POLLING_EVENT_SUBJECTS, unpackPayloadAs, type Envelope } from '@runline/contracts';
import { Inbox, TransactionRunner } from '@runline/db';
import { SecretBox } from '@runline/runtime';
import { insertDeadLetter } from '../dead-letters/dead-letters.repository.js';

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
    await Inbox.handleOnce(this.transactions.dataSource, CONSUMER, envelope.id, ({ manager }) =>
      insertDeadLetter(
        manager,
        {
          id: randomUUID(),
          orgId: envelope.orgId,
          projectId: envelope.projectId,
          originKey: `poll-failed:${envelope.id}`,
          source: event.source,
          targetType: 'polling',
          triggerKey: event.pollKey,
          runTarget: event.runTarget === 'AUTOMATION' ? 'AUTOMATION' : 'FLOW',
          displayPayload: null,
          sealedPayload: this.secrets.seal(JSON.stringify(payload)),
          failureReason: event.failureReason,
          attemptCount: 1,
          invocationId: null,
        },
        new Date(),
      ),
    );
  }
}
