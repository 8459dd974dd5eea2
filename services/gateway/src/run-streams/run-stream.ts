import type { Envelope, RunProgress } from '@runline/contracts';
import { runEventFacts } from './run-event-facts.js';
import type { RunEventsFollower } from './run-events-feed.js';
import { liveItemEvent, PING, RunStreamFold, serverSentEvent, type StreamEvent } from './run-stream-events.js';

/** Where a stream writes, and how it reads what it missed. */
export interface RunStreamPorts {
  write(text: string): void;
  /** Ends the response (after `end`, or when the stream cannot go on). */
  close(): void;
  eventsAfter(afterSequence: number): Promise<Envelope[]>;
  invocation(): Promise<Record<string, unknown>>;
  onError(error: unknown): void;
}

/**
 * One client's stream of one run. It sends every event after `lastEventId` once, in order:
 * first what the run's recorded history holds, then what the feed brings live. Each event is
 * applied in sequence order; a live event that skips a sequence (one missed, or published out of
 * turn) makes the stream read the history from where it is instead, and a repeat is dropped.
 * Work is serialized on one promise chain, so a live event never overtakes the replay.
 */
export class RunStream implements RunEventsFollower {
  private lastSequence = 0;
  private readonly fold = new RunStreamFold();
  /** Live items (steps, messages) sent since the last recorded event: the next must be the one after. */
  private liveItemsSent = 0;
  private lastSentId: number;
  private done = false;
  private queue: Promise<void> = Promise.resolve();

  constructor(
    private readonly ports: RunStreamPorts,
    lastEventId: number,
  ) {
    this.lastSentId = lastEventId;
  }

  /** Sends the recorded history after `lastEventId`; call once the stream follows the feed, so nothing falls between. */
  start(): void {
    this.enqueue(() => this.catchUp());
  }

  onEvent(envelope: Envelope): void {
    this.enqueue(async () => {
      const sequence = Number(envelope.sequence);
      if (sequence !== 0 && sequence <= this.lastSequence) return;
      if (sequence === this.lastSequence + 1) await this.apply(envelope);
      else await this.catchUp();
    });
  }

  /**
   * A step or message as it happens. Sent only when it is the next item of the segment the stream
   * is at: one heard out of turn (an earlier one missed, a recorded event not heard yet) is left
   * to the segment's record, which the fold turns into the same events with the same ids.
   */
  onProgress(progress: RunProgress): void {
    this.enqueue(async () => {
      if (Number(progress.afterSequence) !== this.lastSequence || progress.index !== this.liveItemsSent + 1) return;
      const item = progress.item;
      if (item.case === undefined) return;
      const event = liveItemEvent(this.lastSequence, progress.index, item.case === 'messageText' ? { text: item.value } : { step: JSON.parse(item.value) as unknown });
      this.liveItemsSent = progress.index;
      if (event.id > this.lastSentId) await this.send(event);
    });
  }

  onPing(): void {
    if (!this.done) this.ports.write(PING);
  }

  onShutdown(): void {
    if (this.done) return;
    this.done = true;
    this.ports.close();
  }

  /** The client went away: nothing more is written. */
  stop(): void {
    this.done = true;
  }

  get ended(): boolean {
    return this.done;
  }

  private async catchUp(): Promise<void> {
    for (const envelope of await this.ports.eventsAfter(this.lastSequence)) {
      if (this.done) return;
      await this.apply(envelope);
    }
  }

  private async apply(envelope: Envelope): Promise<void> {
    this.lastSequence = Number(envelope.sequence);
    this.liveItemsSent = 0;
    for (const event of this.fold.eventsOf(runEventFacts(envelope))) {
      if (event.id <= this.lastSentId || this.done) continue;
      await this.send(event);
    }
  }

  private async send(event: StreamEvent): Promise<void> {
    if (event.event === 'end') {
      const invocation = await this.ports.invocation();
      if (this.done) return;
      this.ports.write(serverSentEvent(event.id, 'end', invocation));
      this.lastSentId = event.id;
      this.done = true;
      this.ports.close();
      return;
    }
    this.ports.write(serverSentEvent(event.id, event.event, event.data));
    this.lastSentId = event.id;
  }

  private enqueue(work: () => Promise<void>): void {
    this.queue = this.queue.then(async () => {
      if (this.done) return;
      try {
        await work();
      } catch (error) {
        // The history could not be read (the invocation service did not answer): the client
        // reconnects with its Last-Event-ID and misses nothing.
        this.done = true;
        this.ports.onError(error);
        this.ports.close();
      }
    });
  }
}
