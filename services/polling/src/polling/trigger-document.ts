import type { TriggerRow } from './polling-triggers.repository.js';

/** A trigger in the spec's Polling trigger shape (authHeader only where the caller lists triggers). */
export function triggerDocument(row: TriggerRow, authHeader?: string | null): Record<string, unknown> {
  return {
    id: row.id,
    source: row.source,
    pollKey: row.pollKey,
    dedupeField: row.dedupeField,
    pollEndpoint: row.pollEndpoint,
    ...(authHeader === undefined ? {} : { authHeader }),
    intervalMs: row.intervalMs,
    lastSeenValue: row.lastSeenValue,
    lastPolledAt: row.lastPolledAt?.toISOString() ?? null,
    nextPollAt: row.nextPollAt.toISOString(),
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}
