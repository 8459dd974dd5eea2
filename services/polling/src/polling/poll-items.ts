import { createHash } from 'node:crypto';

/**
 * What a poll response means, pure: which items it holds, which of them run (polling dedupe:
 * the dedupeField and lastSeenValue rule, decided here only), what each run's payload and
 * idempotency key are, and what lastSeenValue becomes.
 */

export type JsonObject = Record<string, unknown>;

/** The item field that dedupes when a trigger names none. */
export const DEFAULT_DEDUPE_FIELD = 'id';

/** The items of a parsed poll response, or why the response holds none we can use. */
export function itemsOf(body: unknown): { items: unknown[] } | { problem: string } {
  if (Array.isArray(body)) return { items: body };
  if (isObject(body)) return { items: Array.isArray(body.data) ? body.data : [body] };
  return { problem: 'Poll response is not a JSON array or object' };
}

/**
 * An item's dedupeField value as stored in lastSeenValue: strings as they are, numbers and
 * booleans as text, objects as JSON; null when the item has no such field (or it is null).
 */
export function dedupeValueOf(item: unknown, field: string): string | null {
  if (!isObject(item) || !Object.hasOwn(item, field)) return null;
  const value = item[field];
  if (value === null || value === undefined) return null;
  return typeof value === 'string' ? value : typeof value === 'object' ? JSON.stringify(value) : String(value);
}

export interface SelectedItem {
  /** Position in the response (part of the run's idempotency key). */
  index: number;
  item: unknown;
  dedupeValue: string | null;
}

/**
 * The dedupe rule: an item whose dedupeField value equals the one remembered from earlier
 * polls is skipped; every other item runs, in response order. Only the last processed value is
 * remembered, so items older than it that come back are processed again. Items without the
 * field always run and leave the remembered value as it is.
 */
export function selectItems(items: readonly unknown[], dedupeField: string, lastSeenValue: string | null): { selected: SelectedItem[]; lastSeenValue: string | null } {
  const selected: SelectedItem[] = [];
  let last = lastSeenValue;
  items.forEach((item, index) => {
    const dedupeValue = dedupeValueOf(item, dedupeField);
    if (dedupeValue !== null && dedupeValue === lastSeenValue) return;
    selected.push({ index, item, dedupeValue });
    if (dedupeValue !== null) last = dedupeValue;
  });
  return { selected, lastSeenValue: last };
}

/** The run's payload: the item's fields plus source and _pollKey (which win over item fields of that name). */
export function itemPayload(item: JsonObject, source: string, pollKey: string): JsonObject {
  return { ...item, source, _pollKey: pollKey };
}

/**
 * The body of an item's run request. A chatbot's flow takes the payload's fields as the body's
 * top-level fields; an automation takes it as the body's `payload` (so no item field is read as
 * a control field such as webhookUrl or enrollmentPolicy), and its Trigger node's
 * expectedPayload checks apply to it as for any automation run.
 */
export function itemRunBody(payload: JsonObject, runTarget: 'FLOW' | 'AUTOMATION'): JsonObject {
  return runTarget === 'AUTOMATION' ? { payload } : payload;
}

/**
 * The idempotency key of an item's run. The same trigger, due time and item give the same key,
 * so a poll taken up again after its replica died replays the runs it already made instead of
 * starting them again.
 */
export function itemRunKey(poll: { id: string; dueAt: Date }, selected: SelectedItem): string {
  const hash = createHash('sha256').update(`${poll.id}|${poll.dueAt.toISOString()}|${selected.index}|${selected.dedupeValue ?? ''}`).digest('hex');
  return `poll-${hash.slice(0, 48)}`;
}

export function isObject(value: unknown): value is JsonObject {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
