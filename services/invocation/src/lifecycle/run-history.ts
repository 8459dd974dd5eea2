/**
 * A run's history as it is written: the stored events (ids, sequences, times), the read model
 * folded from them, and everything the change publishes. Pure, and prepared by the caller
 * before it calls a repository: a repository only writes what these give (for a transition, it
 * applies `HistoryAppend.onto` to the run as it finds it, in memory when the run is known or
 * on the row as read in the transaction).
 */
import { randomUUID } from 'node:crypto';
import type { InvocationEvent, InvocationEventData } from './invocation-event.js';
import { invocationEventMessage } from './invocation-event.codec.js';
import { applyInvocationEvent, type InvocationDocument } from './invocation.projector.js';
import { deliverCallbackMessage, type CallbackTarget } from './run-callback.js';
import { fireRunEndedMessage } from './schedule-fires.js';

/** A message for the outbox. */
export type OutgoingMessage = { id: string; subject: string; data: Uint8Array };

/** The run an event belongs to. */
export type EventOwner = { id: string; orgId: string; projectId: string };

/** A new run's history as the core gave it: events from sequence 1, at `occurredAt` unless `eventTimes` says otherwise. */
export interface NewHistory extends EventOwner {
  occurredAt: Date;
  events: InvocationEventData[];
  /** When each event happened, when they did not all happen at `occurredAt` (a run recorded once it ended). */
  eventTimes?: Date[];
  /** Where a run recorded once it ended calls back (`endedFirstRecordOf`): its DeliverCallback goes out with the run's messages. */
  callback?: CallbackTarget;
}

export function storedEvent(owner: EventOwner, sequence: number, at: Date, data: InvocationEventData): InvocationEvent {
  return { id: randomUUID(), invocationId: owner.id, orgId: owner.orgId, projectId: owner.projectId, sequence, occurredAt: at.toISOString(), data };
}

/** The stored events of new runs (sequence 1, 2, …) and each run's read model folded from them. */
export function historiesOf(items: readonly NewHistory[]): { events: InvocationEvent[]; documents: Map<string, InvocationDocument> } {
  const events: InvocationEvent[] = [];
  const documents = new Map<string, InvocationDocument>();
  for (const item of items) {
    let document: InvocationDocument | null = null;
    item.events.forEach((data, index) => {
      const event = storedEvent(item, index + 1, eventTime(item, index), data);
      events.push(event);
      document = applyInvocationEvent(document, event);
    });
    if (document) documents.set(item.id, document);
  }
  return { events, documents };
}

/** A new run's history, ready to be written: its stored events with their outbox messages, its read model, when it last changed and who started it. */
export interface NewRunHistory {
  events: InvocationEvent[];
  eventMessages: OutgoingMessage[];
  document: InvocationDocument;
  updatedAt: Date;
  startedByTokenId: string | null;
}

/**
 * `item` with the history it is written with, and its DeliverCallback (and a fire's
 * FireRunEnded) after its own messages when it was recorded ended (as a transition that ends
 * a run publishes them).
 */
export function withHistory<T extends NewHistory & { messages: OutgoingMessage[] }>(item: T): T & { history: NewRunHistory } {
  const { events, documents } = historiesOf([item]);
  const document = documents.get(item.id) as InvocationDocument;
  const callback = item.callback ? deliverCallbackMessage(document, item, item.callback) : null;
  const fireEnded = fireRunEndedMessage(document, events, item);
  return {
    ...item,
    messages: [...item.messages, ...(callback ? [callback] : []), ...(fireEnded ? [fireEnded] : [])],
    history: {
      events,
      eventMessages: events.map((event) => invocationEventMessage(event)),
      document,
      updatedAt: lastEventTime(item),
      startedByTokenId: startedBy(item),
    },
  };
}

/** What a transition appends to a run, folded onto the run as it is when written. */
export interface AppendedHistory {
  stored: InvocationEvent[];
  document: InvocationDocument | null;
  outbox: OutgoingMessage[];
}

/** A transition's events and messages, to be appended at whatever sequence and read model the run has when the repository writes them. */
export interface HistoryAppend {
  readonly eventCount: number;
  readonly at: Date;
  onto(owner: EventOwner, sequenceBefore: number, documentBefore: InvocationDocument | null): AppendedHistory;
}

/** The history a transition appends: its events, its messages, and the callback when the run ends with it. */
export function historyAppend(
  transition: { change: { callback?: CallbackTarget }; events: InvocationEventData[]; messages?: OutgoingMessage[] },
  at: Date = new Date(),
): HistoryAppend {
  const { events, messages = [] } = transition;
  return {
    eventCount: events.length,
    at,
    onto(owner, sequenceBefore, documentBefore) {
      const stored = nextEvents(owner, sequenceBefore, events, at);
      const document = foldEvents(documentBefore, stored);
      return { stored, document, outbox: outgoingOf(stored, messages, transition.change.callback, document, owner) };
    },
  };
}

export function eventTime(item: NewHistory, index: number): Date {
  return item.eventTimes?.[index] ?? item.occurredAt;
}

export function lastEventTime(item: NewHistory): Date {
  return eventTime(item, item.events.length - 1);
}

/** Who started a new run: the token on its first event's request, if any. */
export function startedBy(item: NewHistory): string | null {
  for (const data of item.events) {
    const first = data.type === 'InvocationQueued' || data.type === 'InvocationScheduled' || data.type === 'InvocationStarted' || data.type === 'InvocationFailed';
    if (first && data.request) {
      return data.request.startedByTokenId;
    }
  }
  return null;
}

/** The events after `sequence` of a run, stored at `at`. */
export function nextEvents(owner: EventOwner, sequence: number, events: InvocationEventData[], at: Date): InvocationEvent[] {
  return events.map((data, index) => storedEvent(owner, sequence + index + 1, at, data));
}

/** The read model after `stored`. */
export function foldEvents(document: InvocationDocument | null, stored: InvocationEvent[]): InvocationDocument | null {
  for (const event of stored) document = applyInvocationEvent(document, event);
  return document;
}

/** What a transition publishes: its events, the caller's messages, and the callback and a fire's FireRunEnded when the run ended. */
export function outgoingOf(
  stored: InvocationEvent[],
  messages: OutgoingMessage[],
  callback: CallbackTarget | undefined,
  document: InvocationDocument | null,
  owner: { orgId: string; projectId: string },
): OutgoingMessage[] {
  const out = [...stored.map((event) => invocationEventMessage(event)), ...messages];
  if (callback && document) {
    const message = deliverCallbackMessage(document, owner, callback);
    if (message) out.push(message);
  }
  const fireEnded = fireRunEndedMessage(document, stored, owner);
  if (fireEnded) out.push(fireEnded);
  return out;
}
