import { EVENT_TYPES, timestampDate, unpackPayload, type Envelope } from '@runline/contracts';
import type { RunEventFacts } from './run-stream-events.js';

/** Facts of the envelopes heard on the feed: every stream of the run gets the same envelope object, decoded once. */
const factsOf = new WeakMap<Envelope, RunEventFacts>();

/** What a run stream needs of one invocation event (its envelope from the bus or the recorded history); read only. */
export function runEventFacts(envelope: Envelope): RunEventFacts {
  let facts = factsOf.get(envelope);
  if (!facts) factsOf.set(envelope, (facts = readFacts(envelope)));
  return facts;
}

function readFacts(envelope: Envelope): RunEventFacts {
  const facts: RunEventFacts = {
    type: envelope.type,
    sequence: Number(envelope.sequence),
    occurredAt: envelope.occurredAt ? timestampDate(envelope.occurredAt).toISOString() : new Date().toISOString(),
  };
  const unpacked = segmentRecord(envelope);
  if (unpacked) {
    facts.steps = parsedArray(unpacked.stepsJson);
    // The attempt's messages as recorded; an event recorded before they were has a bot's or flow's in its result only.
    if (unpacked.messagesJson) facts.messages = parsedArray(unpacked.messagesJson).filter((text): text is string => typeof text === 'string');
    else if (unpacked.resultJson !== undefined) facts.messages = messagesOf(unpacked.resultJson);
  }
  return facts;
}

/** The events that end a segment of a run carry its steps (and a success its result). */
const SEGMENT_ENDS: ReadonlySet<string> = new Set([
  EVENT_TYPES.INVOCATION_SUCCEEDED,
  EVENT_TYPES.INVOCATION_FAILED,
  EVENT_TYPES.INVOCATION_TIMED_OUT,
  EVENT_TYPES.INVOCATION_SUSPENDED,
  EVENT_TYPES.INVOCATION_RETRY_SCHEDULED,
]);

function segmentRecord(envelope: Envelope): { stepsJson: string; messagesJson: string; resultJson?: string } | null {
  if (!SEGMENT_ENDS.has(envelope.type)) return null;
  const { payload } = unpackPayload(envelope) as { payload: { stepsJson?: string; messagesJson?: string; resultJson?: string } };
  return { stepsJson: payload.stepsJson ?? '', messagesJson: payload.messagesJson ?? '', resultJson: payload.resultJson };
}

function parsedArray(json: string): unknown[] {
  if (!json) return [];
  const value = JSON.parse(json) as unknown;
  return Array.isArray(value) ? value : [];
}

/** A bot's or flow's result holds the messages it said; an automation's result is its own. */
function messagesOf(resultJson: string): string[] {
  if (!resultJson) return [];
  const result = JSON.parse(resultJson) as unknown;
  if (result === null || typeof result !== 'object' || !Array.isArray((result as { messages?: unknown }).messages)) return [];
  return ((result as { messages: unknown[] }).messages).filter((text): text is string => typeof text === 'string');
}
