import { Controller, Inject } from '@nestjs/common';
import { Ctx, EventPattern, Payload } from '@nestjs/microservices';
import { redeliveryDelay, type BusContext, type DeliveredMessage } from '@runline/bus';
import {
  CALLBACK_COMMAND_SUBJECTS,
  EVENT_TYPES,
  isUuid,
  unpackPayloadAs,
  type Envelope,
} from '@runline/contracts';
import { currentTraceparent, type Logger } from '@runline/observability';
import { InvalidCommandError, LOGGER, readCommandOrTerminate } from '@runline/runtime';
import { DeliveryDispatcher, DispatcherStoppedError } from '../deliveries/delivery-dispatcher.js';
import type { NewDelivery } from '../deliveries/callback-deliveries.repository.js';

/**
 * Takes DeliverCallback commands off the work queue. The delivery row (keyed by the envelope
 * id, one per run) is the record that the command was processed, written in the transaction
 * that creates the delivery; a redelivered command inserts nothing. The message is settled
 * after that commit, not after the attempt, and the next command is taken at once, so commands
 * arriving together share one transaction.
 */
@Controller()
export class DeliverCallbackHandler {
  constructor(
    private readonly dispatcher: DeliveryDispatcher,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  @EventPattern<string>(CALLBACK_COMMAND_SUBJECTS.DELIVER_CALLBACK)
  async handle(@Payload() envelope: Envelope, @Ctx() context: BusContext): Promise<void> {
    const message = context.getMessage();
    const delivery = await readCommandOrTerminate(envelope, message, this.logger, 'DeliverCallback', deliveryOf);
    if (delivery === undefined) return;
    if (!this.dispatcher.accepting) {
      // Shutting down: another replica takes it now (no redelivery delay, no claim left here).
      await message.nak(0);
      return;
    }
    message.settleLater();
    void this.record(delivery, message);
  }

  private async record(delivery: NewDelivery, message: DeliveredMessage): Promise<void> {
    try {
      await this.dispatcher.accept(delivery);
      await message.ack();
    } catch (error) {
      if (error instanceof DispatcherStoppedError) {
        await message.nak(0).catch(() => undefined);
        return;
      }
      this.logger.warn({ err: error, deliveryId: delivery.id }, 'DeliverCallback could not be recorded; it is redelivered');
      await message.nak(redeliveryDelay(message.deliveryCount)).catch(() => undefined);
    }
  }
}

function deliveryOf(envelope: Envelope): NewDelivery {
  const command = unpackPayloadAs(envelope, EVENT_TYPES.DELIVER_CALLBACK);
  const invocationId = command.invocationId || envelope.invocationId;
  const problem = !isUuid(envelope.id)
    ? 'the envelope id must be a UUID'
    : !isUuid(invocationId)
      ? 'invocationId must be a UUID'
      : command.url === ''
        ? 'a callback needs a URL'
        : command.body.length === 0
          ? 'a callback needs a body'
          : null;
  if (problem !== null) throw new InvalidCommandError(`DeliverCallback ${envelope.id}: ${problem}`);
  return {
    id: envelope.id,
    invocationId,
    orgId: envelope.orgId,
    projectId: envelope.projectId,
    url: command.url,
    sealedSecret: command.sealedSecret === '' ? null : command.sealedSecret,
    body: command.body,
    runStatus: command.runStatus,
    correlationId: envelope.correlationId || envelope.id,
    // This service's span handling the command (a child of the sender's), so later work hangs under it.
    traceparent: currentTraceparent() ?? (envelope.traceparent || null),
  };
}
