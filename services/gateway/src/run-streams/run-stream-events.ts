/**
 * What a run's stream sends (DESIGN section 14), worked out from the run's events alone, so a
 * stream on any gateway replica, live or replaying the recorded history, sends the same events
 * with the same ids.
 *
 * Ids: one integer per event, increasing within the run, derived from the run's event
 * sequence (the `sequence` of its envelopes): the status event of the event with sequence s has
 * id s × ID_STRIDE; the live events between the events s and s + 1 (steps, messages) take
 * s × ID_STRIDE + 1, + 2, …; `end` takes s × ID_STRIDE + END_OFFSET after the final event s.
 * So `Last-Event-ID` n says "everything up to event sequence ⌊n / ID_STRIDE⌋ and, within it, n".
 */
import { EVENT_TYPES } from '@runline/contracts';

export const ID_STRIDE = 10_000;
/** `end`'s place after its final event: after every live event that could come before it. */
export const END_OFFSET = ID_STRIDE - 1;

export const FINAL_STATUSES: ReadonlySet<string> = new Set(['SUCCEEDED', 'FAILED', 'TIMEOUT', 'CANCELLED']);

/**
 * The status a run moves to with each event; absent: the event changes no status (a reschedule
 * keeps SCHEDULED, a decided approval keeps SUSPENDED until InvocationResumed, the exhausted
 * retries follow InvocationFailed).
 */
const STATUS_AFTER: Readonly<Record<string, string>> = {
  [EVENT_TYPES.INVOCATION_QUEUED]: 'QUEUED',
  [EVENT_TYPES.INVOCATION_SCHEDULED]: 'SCHEDULED',
  [EVENT_TYPES.INVOCATION_STARTED]: 'RUNNING',
  [EVENT_TYPES.INVOCATION_RESUMED]: 'RUNNING',
  [EVENT_TYPES.INVOCATION_SUSPENDED]: 'SUSPENDED',
  [EVENT_TYPES.INVOCATION_RETRY_SCHEDULED]: 'QUEUED',
  [EVENT_TYPES.INVOCATION_SUCCEEDED]: 'SUCCEEDED',
  [EVENT_TYPES.INVOCATION_FAILED]: 'FAILED',
  [EVENT_TYPES.INVOCATION_TIMED_OUT]: 'TIMEOUT',
  [EVENT_TYPES.INVOCATION_CANCELLED]: 'CANCELLED',
};

/** One server-sent event; `end`'s data (the invocation as GET answers it) is read when it is sent. */
export type StreamEvent =
  | { id: number; event: 'status'; data: { status: string; at: string } }
  | { id: number; event: 'step'; data: { step: Record<string, unknown> } }
  | { id: number; event: 'message'; data: { text: string } }
  | { id: number; event: 'end' };

/** A run event as the fold needs it: its type and place, and (for the events that end a segment) what the segment recorded. */
export interface RunEventFacts {
  type: string;
  sequence: number;
  occurredAt: string;
  /** The steps of the attempt so far (the events that end a segment carry them); undefined otherwise. */
  steps?: unknown[];
  /** The messages of the attempt so far, as the event records them (older events: a bot's or flow's result's). */
  messages?: string[];
}

/** The status a run moves to with an event of this type; undefined when it changes none. */
export function statusAfter(type: string): string | undefined {
  return STATUS_AFTER[type];
}

/** Whether this event type ends a run (its status is final). */
export function endsRun(type: string): boolean {
  const status = STATUS_AFTER[type];
  return status !== undefined && FINAL_STATUSES.has(status);
}

/** The node types whose step produced one message (unless it failed). */
const MESSAGE_NODES: ReadonlySet<string> = new Set(['message', 'ask']);
/** A step record's fields in the order every stream sends them: the same bytes live or replayed. */
const STEP_FIELD_ORDER = ['nodeId', 'type', 'status', 'startedAt', 'completedAt', 'durationMs', 'error', 'approval'];

/**
 * A run's stream events, folded from its events in sequence order. The steps and messages of a
 * segment (from one recorded event to the next) are recorded with the event that ends it
 * (suspended, retry, end), attempt by attempt; each new one becomes a `step` event (a message
 * step's `message` first), with the ids between the two events' status ids. The same events
 * fold to the same stream events on every replica, from the start or from Last-Event-ID.
 */
export class RunStreamFold {
  /** Steps and messages of the current attempt already turned into events (a resumed run carries its earlier ones). */
  private stepsSeen = 0;
  private messagesSeen = 0;

  eventsOf(facts: RunEventFacts): StreamEvent[] {
    const events: StreamEvent[] = [];
    // A new attempt records its steps from none (a resume carries the earlier ones on).
    if (facts.type === EVENT_TYPES.INVOCATION_STARTED) {
      this.stepsSeen = 0;
      this.messagesSeen = 0;
    }
    events.push(...this.segmentEvents(facts));
    const status = STATUS_AFTER[facts.type];
    if (!status) return events;
    const base = facts.sequence * ID_STRIDE;
    events.push({ id: base, event: 'status', data: { status, at: facts.occurredAt } });
    if (FINAL_STATUSES.has(status)) events.push({ id: base + END_OFFSET, event: 'end' });
    return events;
  }

  /** The new steps and messages the event records, with ids after the previous event's. */
  private segmentEvents(facts: RunEventFacts): StreamEvent[] {
    const steps = facts.steps ?? [];
    const messages = facts.messages ?? [];
    const events: StreamEvent[] = [];
    let id = (facts.sequence - 1) * ID_STRIDE;
    const nextMessage = () => {
      const text = messages[this.messagesSeen++];
      if (typeof text === 'string') events.push({ id: ++id, event: 'message', data: { text } });
    };
    for (const step of steps.slice(this.stepsSeen)) {
      const record = stepRecord(step);
      if (MESSAGE_NODES.has(String(record.type)) && record.status !== 'FAILED') nextMessage();
      events.push({ id: ++id, event: 'step', data: { step: record } });
    }
    this.stepsSeen = Math.max(this.stepsSeen, steps.length);
    while (this.messagesSeen < messages.length) nextMessage();
    return events;
  }
}

/** A step record with its fields in the order every stream sends them. */
export function stepRecord(step: unknown): Record<string, unknown> {
  const source = step !== null && typeof step === 'object' ? (step as Record<string, unknown>) : { value: step };
  const record: Record<string, unknown> = {};
  for (const field of STEP_FIELD_ORDER) if (Object.hasOwn(source, field)) record[field] = source[field];
  for (const field of Object.keys(source).sort()) if (!Object.hasOwn(record, field)) record[field] = source[field];
  return record;
}

/**
 * The stream event of a live item (a step or message a running run reports): it takes the id the
 * fold gives the same item once the segment is recorded, so a stream sends it once either way.
 */
export function liveItemEvent(afterSequence: number, index: number, item: { step: unknown } | { text: string }): StreamEvent {
  const id = afterSequence * ID_STRIDE + index;
  return 'text' in item ? { id, event: 'message', data: { text: item.text } } : { id, event: 'step', data: { step: stepRecord(item.step) } };
}

/** The last event a client saw, from its `Last-Event-ID` header: 0 (from the start) when absent or not an id. */
export function lastEventIdOf(header: string | string[] | undefined): number {
  const text = Array.isArray(header) ? header[0] : header;
  if (text === undefined || !/^\d{1,15}$/.test(text.trim())) return 0;
  return Number(text.trim());
}

/** The text of one event on the wire. */
export function serverSentEvent(id: number | null, event: string, data: unknown): string {
  return `${id === null ? '' : `id: ${id}\n`}event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}

/** The comment that keeps a quiet stream alive. */
export const PING = ': ping\n\n';
