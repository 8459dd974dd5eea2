import { BaseRpcContext } from '@nestjs/microservices';
import type { DeliveredMessage } from './bus.js';

/** `[subject, headers, delivered message (events only)]`. */
export type BusContextArgs = [subject: string, headers: Record<string, string>, message: DeliveredMessage | undefined];

/**
 * What a `BusServer` handler gets as its context (`@Ctx() context: BusContext`).
 *
 * For an `@EventPattern` handler, `getMessage()` is the delivered message: its `id` (the inbox
 * key), `deliveryCount`, and `ack()`/`nak(delayMs)`/`term()` for a handler that settles it
 * itself. Otherwise returning acks it and throwing naks it.
 */
export class BusContext extends BaseRpcContext<BusContextArgs> {
  /** The logical subject: the message's subject for events, the handler's pattern for requests. */
  getSubject(): string {
    return this.args[0];
  }

  getHeaders(): Record<string, string> {
    return this.args[1];
  }

  /** True in an `@EventPattern` handler, false in a `@MessagePattern` handler. */
  isEvent(): boolean {
    return this.args[2] !== undefined;
  }

  /** The delivered message. Throws in a `@MessagePattern` handler, which has none. */
  getMessage(): DeliveredMessage {
    const message = this.args[2];
    if (!message) throw new Error('a request has no delivered message; getMessage() is for event handlers');
    return message;
  }
}
