import type { JsMsg } from '@nats-io/jetstream';

/**
 * The messages a subscriber has pulled and not yet started on, oldest first. JetStream counts
 * a message's ack wait from its delivery: one waiting behind slower ones would be handed out
 * again, and spend a delivery of its `maxDeliver`, though nobody had started on it (a backlog
 * after a restart lost callbacks that way). So every third of the ack wait each waiting message
 * is marked in progress (`working()`), and its ack wait runs from when its handling starts, as
 * the in-process bus counts it. The message being handled is not kept alive: a handler that
 * outlives ack wait is presumed stuck, its message goes to another subscriber, and so do the
 * ones waiting behind it (handed back). Nothing more is pulled once the handler has been slow
 * for a third of ack wait (`onSlow` ends the pull under way): its message may be redelivered
 * from two thirds of ack wait on, and a pull still open here would take that redelivery, hand
 * it back unhandled and spend one of its deliveries (CI saw the second handling come as the
 * third delivery).
 */
export class PulledMessages {
  private readonly waiting: JsMsg[] = [];
  private readonly keepAlive: NodeJS.Timeout;
  private ended = false;
  private waiters: Array<() => void> = [];
  /** When the handler took the message it is handling; null while it waits for one. */
  private handlingSince: number | null = null;
  /** `onSlow` was called for the message in hand. */
  private slowSignalled = false;
  private ticks = 0;

  constructor(
    private readonly ackWaitMs: number,
    private readonly onSlow: () => void = () => undefined,
  ) {
    // Ticks every sixth of ack wait: a slow handler is seen by half of it; waiting messages are
    // kept alive every other tick (a third).
    this.keepAlive = setInterval(() => {
      if (this.slow() && !this.slowSignalled) {
        this.slowSignalled = true;
        this.onSlow();
      }
      if (++this.ticks % 2 === 0) {
        if (this.stuck()) this.handBack();
        else for (const message of this.waiting) message.working();
      }
      // Wakes a puller that waits for the handler to come back.
      this.changed();
    }, Math.max(50, Math.floor(ackWaitMs / 6)));
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
    this.handlingSince = null;
    this.slowSignalled = false;
    while (this.waiting.length === 0 && !this.ended) await this.change();
    const message = this.waiting.shift();
    if (message) this.handlingSince = Date.now();
    this.changed();
    return message;
  }

  /** Resolves once at most `count` messages wait and the handler is not slow (or it ended). */
  async atMost(count: number): Promise<void> {
    while ((this.waiting.length > count || this.slow()) && !this.ended) await this.change();
  }

  /** The message in hand has been handled for a third of ack wait: pull nothing more until it returns. */
  private slow(): boolean {
    return this.handlingSince !== null && Date.now() - this.handlingSince > this.ackWaitMs / 3;
  }

  /** The message in hand has been handled for longer than ack wait: presumed stuck. */
  private stuck(): boolean {
    return this.handlingSince !== null && Date.now() - this.handlingSince > this.ackWaitMs;
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
