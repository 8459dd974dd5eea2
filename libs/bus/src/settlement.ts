import type { BusLogger } from './bus-logger.js';
import { errorMessage } from './bus-logger.js';
import type { BusMessage, DeliveredMessage, MessageHandler } from './bus.js';

/** How a transport settles one delivery. */
export interface Settle {
  ack(): Promise<void>;
  nak(delayMs?: number): Promise<void>;
  term(): Promise<void>;
}

const MAX_REDELIVERY_DELAY_MS = 30_000;

/**
 * How long a failed delivery waits before it comes again: doubling from `baseMs` with each
 * delivery, at most 30 s. A fixed short delay would spend a consumer's `maxDeliver` (10) within
 * seconds of a passing outage (a database restart) and drop the message for good; doubling
 * spreads the ten over about a minute and a half.
 */
export function redeliveryDelay(deliveryCount: number, baseMs = 250): number {
  return Math.min(MAX_REDELIVERY_DELAY_MS, baseMs * 2 ** Math.max(0, deliveryCount - 1));
}

export interface DeliveryContext {
  stream: string;
  durable: string;
  logger?: BusLogger;
}

/**
 * Runs `handler` on one delivery under the rules of `MessageHandler`: the first of ack, nak or
 * term settles the message and later calls are no-ops; a handler that returns without settling
 * acks (unless it chose `settleLater`), one that throws without settling naks. Never rejects: a failure to settle is logged and
 * left to ack-wait expiry, which redelivers.
 */
export async function runHandler(
  fields: BusMessage & { deliveryCount: number },
  settle: Settle,
  handler: MessageHandler,
  context: DeliveryContext,
): Promise<void> {
  let settled = false;
  let later = false;
  const once =
    <A extends unknown[]>(operation: (...args: A) => Promise<void>) =>
    async (...args: A): Promise<void> => {
      if (settled) return;
      settled = true;
      await operation(...args);
    };
  const message: DeliveredMessage = {
    ...fields,
    ack: once(() => settle.ack()),
    nak: once((delayMs?: number) => settle.nak(delayMs)),
    term: once(() => settle.term()),
    settleLater: () => {
      later = true;
    },
  };
  const where = {
    stream: context.stream,
    durable: context.durable,
    subject: fields.subject,
    id: fields.id,
    deliveryCount: fields.deliveryCount,
  };
  let failed = false;
  try {
    await handler(message);
  } catch (err) {
    failed = true;
    context.logger?.warn({ ...where, err: errorMessage(err) }, 'bus handler failed');
  }
  if (settled || (later && !failed)) return;
  try {
    await (failed ? message.nak() : message.ack());
  } catch (err) {
    context.logger?.warn({ ...where, err: errorMessage(err) }, 'bus could not settle a message');
  }
}
