import type { JsMsg } from '@nats-io/jetstream';

/**
 * The messages a subscriber has pulled and not yet started on, oldest first. JetStream counts
 * a message's ack wait from its delivery: one waiting behind slower ones would be handed out
 * again, and spend a delivery of its `maxDeliver`, though nobody had started on it (a backlog
 * after a restart lost callbacks that way). So every third of the ack wait each waiting message
 * is marked in progress (`working()`), and its ack wait runs from when its handling starts, as
 * the in-process bus counts it. The message being handled is not kept alive: a handler that
 * outlives ack wait is presumed stuck, its message goes to another subscriber, and so do the
 * ones waiting behind it (handed back), and nothing more is pulled until it returns.
 */
export class PulledMessages {
  private readonly waiting: JsMsg[] = [];
  private readonly keepAlive: NodeJS.Timeout;
  private ended = false;
  private waiters: Array<() => void> = [];
  /** When the handler took the message it is handling; null while it waits for one. */
  private handlingSince: number | null = null;

  constructor(private readonly ackWaitMs: number) {
    this.keepAlive = setInterval(() => {
      if (this.stuck()) this.handBack();
      else for (const message of this.waiting) message.working();
      // Wakes a puller that waits for the handler to come back.
      this.changed();
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
    this.handlingSince = null;
    while (this.waiting.length === 0 && !this.ended) await this.change();
    const message = this.waiting.shift();
    if (message) this.handlingSince = Date.now();
    this.changed();
    return message;
  }

  /** Resolves once at most `count` messages wait and the handler is not stuck (or it ended). */
  async atMost(count: number): Promise<void> {
    while ((this.waiting.length > count || this.stuck()) && !this.ended) await this.change();
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
