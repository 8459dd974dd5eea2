import type { JsMsg } from '@nats-io/jetstream';

/**
 * The messages a subscriber has pulled and not yet started on, oldest first. JetStream counts
 * a message's ack wait from its delivery: one waiting behind slower ones would be handed out
 * again, and spend a delivery of its `maxDeliver`, though nobody had started on it (a backlog
 * after a restart lost callbacks that way). So every third of the ack wait each waiting message
 * is marked in progress (`working()`), and its ack wait runs from when its handling starts, as
 * the in-process bus counts it. The message being handled is not kept alive: a handler that
 * outlives ack wait is presumed stuck and its message goes to another subscriber.
 */
export class PulledMessages {
  private readonly waiting: JsMsg[] = [];
  private readonly keepAlive: NodeJS.Timeout;
  private ended = false;
  private waiters: Array<() => void> = [];

  constructor(ackWaitMs: number) {
    this.keepAlive = setInterval(() => {
      for (const message of this.waiting) message.working();
    }, Math.max(100, Math.floor(ackWaitMs / 3)));
    this.keepAlive.unref();
  }

  get length(): number {
    return this.waiting.length;
  }

  push(message: JsMsg): void {
    this.waiting.push(message);
    this.changed();
  }

  /** The next message to handle; undefined once `end` was called and none is left. */
  async next(): Promise<JsMsg | undefined> {
    while (this.waiting.length === 0 && !this.ended) await this.change();
    const message = this.waiting.shift();
    this.changed();
    return message;
  }

  /** Resolves once at most `count` messages wait (or it ended). */
  async atMost(count: number): Promise<void> {
    while (this.waiting.length > count && !this.ended) await this.change();
  }

  /** No more will come; `next` hands out what is left, then undefined. */
  end(): void {
    this.ended = true;
    clearInterval(this.keepAlive);
    this.changed();
  }

  /** Gives every waiting message back to the consumer now (for another subscriber), not after ack wait. */
  handBack(): void {
    for (const message of this.waiting.splice(0)) message.nak();
    this.changed();
  }

  private change(): Promise<void> {
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  private changed(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const wake of waiters) wake();
  }
}
