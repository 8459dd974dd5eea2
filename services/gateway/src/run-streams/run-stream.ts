import type { Envelope, RunProgress } from '@runline/contracts';
import { runEventFacts } from './run-event-facts.js';
import type { RunEventsFollower } from './run-events-feed.js';
import { END_OFFSET, ID_STRIDE, liveItemEvent, PING, RunStreamFold, serverSentEvent, type StreamEvent } from './run-stream-events.js';

/** The stream events of live items heard on the feed: every stream of the run gets the same object, parsed once. */
const liveEvents = new WeakMap<RunProgress, StreamEvent | null>();

function liveEventOf(progress: RunProgress): StreamEvent | null {
  let event = liveEvents.get(progress);
  if (event === undefined) {
    const item = progress.item;
    event =
      item.case === undefined
        ? null
        : liveItemEvent(Number(progress.afterSequence), progress.index, item.case === 'messageText' ? { text: item.value } : { step: JSON.parse(item.value) as unknown });
    liveEvents.set(progress, event);
  }
  return event;
}

/** Live items kept for a segment the stream has not reached yet (its Started heard after them); more are left to the record. */
const AHEAD_KEPT = 256;

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
 * Work is serialized on one promise chain, so a live event never overtakes the replay. Live
 * steps and messages take the ids the record will give them, so a stream resumed after one goes
 * on with the next, and one heard before the event that starts its segment waits for it.
 */
export class RunStream implements RunEventsFollower {
  private lastSequence = 0;
  private readonly fold = new RunStreamFold();
  /** Live items (steps, messages) sent since the last recorded event: the next must be the one after. */
  private liveItemsSent = 0;
  /**
   * Live items of a later segment than the stream is at: core NATS may bring a run's first steps
   * before the JetStream event that starts their segment. Sent once the stream reaches it.
   */
  private ahead: RunProgress[] = [];
  private lastSentId: number;
  private done = false;
  private started = false;
  /** The stream's work, one after another; what the feed brings before `start` waits behind it. */
  private queue: Promise<void>;
  private open: () => void = () => undefined;

  constructor(
    private readonly ports: RunStreamPorts,
    lastEventId: number,
  ) {
    this.lastSentId = lastEventId;
    this.queue = new Promise((resolve) => (this.open = resolve));
  }

  /**
   * Sends the recorded history after `lastEventId` (`history`, the run's events read from its
   * start, when the caller has them; else read here), then what the feed brought meanwhile. Call
   * once the stream follows the feed, so nothing falls between.
   */
  start(history?: Envelope[]): void {
    this.started = true;
    void this.attempt(() => (history ? this.applyAll(history) : this.catchUp())).finally(() => this.open());
  }

  onEvent(envelope: Envelope): void {
    this.enqueue(async () => {
      const sequence = Number(envelope.sequence);
      if (sequence !== 0 && sequence <= this.lastSequence) return;
      if (sequence === this.lastSequence + 1) {
        await this.apply(envelope);
        await this.sendAhead();
      } else await this.catchUp();
    });
  }

  /**
   * A step or message as it happens. Sent only when it is the next item of the segment the stream
   * is at: one heard out of turn (an earlier one missed, a recorded event not heard yet) is left
   * to the segment's record, which the fold turns into the same events with the same ids.
   */
  onProgress(progress: RunProgress): void {
    this.enqueue(async () => {
      const segment = Number(progress.afterSequence);
      if (segment > this.lastSequence) {
        if (this.ahead.length < AHEAD_KEPT) this.ahead.push(progress);
        return;
      }
      await this.sendLive(progress);
    });
  }

  private async sendLive(progress: RunProgress): Promise<void> {
    if (Number(progress.afterSequence) !== this.lastSequence || progress.index !== this.liveItemsSent + 1) return;
    const event = liveEventOf(progress);
    if (!event) return;
    this.liveItemsSent = progress.index;
    if (event.id > this.lastSentId) await this.send(event);
  }

  /** Sends the live items heard before the stream reached their segment; forgets those of segments it is past. */
  private async sendAhead(): Promise<void> {
    if (this.ahead.length === 0) return;
    const reached = this.ahead.filter((progress) => Number(progress.afterSequence) === this.lastSequence);
    this.ahead = this.ahead.filter((progress) => Number(progress.afterSequence) > this.lastSequence);
    for (const progress of reached) await this.sendLive(progress);
  }

  onPing(): void {
    if (this.started && !this.done) this.ports.write(PING);
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
    await this.applyAll(await this.ports.eventsAfter(this.lastSequence));
  }

  private async applyAll(envelopes: Envelope[]): Promise<void> {
    for (const envelope of envelopes) {
      if (this.done) return;
      if (Number(envelope.sequence) > this.lastSequence) await this.apply(envelope);
    }
    await this.sendAhead();
  }

  private async apply(envelope: Envelope): Promise<void> {
    const sequence = Number(envelope.sequence);
    this.lastSequence = sequence;
    for (const event of this.fold.eventsOf(runEventFacts(envelope))) {
      if (event.id <= this.lastSentId || this.done) continue;
      await this.send(event);
    }
    // Live items of this segment the client saw already (it resumed after one of them): the next one continues.
    const seenInSegment = this.lastSentId - sequence * ID_STRIDE;
    this.liveItemsSent = seenInSegment > 0 && seenInSegment < END_OFFSET ? seenInSegment : 0;
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
    this.queue = this.queue.then(() => this.attempt(work));
  }

  private async attempt(work: () => Promise<void>): Promise<void> {
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
  }
}
