import { randomUUID } from 'node:crypto';
import type { EntityManager } from 'typeorm';
import { returningRows, type TransactionRunner } from '@runline/db';

/** The dedupe window of X-Runline-Delivery (DESIGN section 9). */
export const DELIVERY_DEDUPE_HOURS = 24;

/** A verified delivery's id at its hook. */
export interface DeliveryClaim {
  hookId: string;
  deliveryId: string;
}

/** Claims the ids that are new, or whose window has ended, with the keys given; returns the claimed ones. */
const CLAIM = `INSERT INTO hook_deliveries (hook_id, delivery_id, delivery_key, first_seen_at)
  SELECT c.hook_id, c.delivery_id, c.delivery_key, now() FROM unnest($1::uuid[], $2::text[], $3::uuid[]) AS c (hook_id, delivery_id, delivery_key)
  ON CONFLICT (hook_id, delivery_id) DO UPDATE SET delivery_key = EXCLUDED.delivery_key, first_seen_at = EXCLUDED.first_seen_at
   WHERE hook_deliveries.first_seen_at < now() - make_interval(hours => ${DELIVERY_DEDUPE_HOURS})
  RETURNING hook_id::text, delivery_id, delivery_key::text`;
const SEEN = `SELECT d.hook_id::text, d.delivery_id, d.delivery_key::text
  FROM hook_deliveries d JOIN unnest($1::uuid[], $2::text[]) AS c (hook_id, delivery_id) ON d.hook_id = c.hook_id AND d.delivery_id = c.delivery_id`;

/**
 * The idempotency key of each hook's delivery id: the one handed out at its first arrival when
 * that was within the dedupe window, else a new one (and the window starts again). Many claims
 * share one statement (the webhook service batches concurrent deliveries, one commit for all);
 * the same id twice in one batch gets one key. Concurrent arrivals of the same id in different
 * batches get the same key too: the primary key serializes them. Claims are written in key
 * order, so two batches never wait on each other's rows in a cycle.
 */
export async function deliveryKeysOf(runner: TransactionRunner, claims: readonly DeliveryClaim[]): Promise<string[]> {
  const name = (claim: DeliveryClaim) => `${claim.hookId.toLowerCase()}\n${claim.deliveryId}`;
  const unique = [...new Map(claims.map((claim) => [name(claim), claim])).entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const keys = new Map<string, string>();
  const claimed = await runner.runStatement<KeyRow[]>(CLAIM, [
    unique.map(([, claim]) => claim.hookId),
    unique.map(([, claim]) => claim.deliveryId),
    unique.map(() => randomUUID()),
  ]);
  for (const row of claimed) keys.set(name({ hookId: row.hook_id, deliveryId: row.delivery_id }), row.delivery_key);
  const seen = unique.filter(([key]) => !keys.has(key)).map(([, claim]) => claim);
  if (seen.length > 0) {
    // Seen within the window: a statement of its own sees the rows even if they were committed just now.
    const rows = await runner.runStatement<KeyRow[]>(SEEN, [seen.map((claim) => claim.hookId), seen.map((claim) => claim.deliveryId)]);
    for (const row of rows) keys.set(name({ hookId: row.hook_id, deliveryId: row.delivery_id }), row.delivery_key);
  }
  return claims.map((claim) => {
    const key = keys.get(name(claim));
    if (key === undefined) throw new Error('delivery id vanished between claim and read');
    return key;
  });
}

interface KeyRow {
  hook_id: string;
  delivery_id: string;
  delivery_key: string;
}

/** Deletes delivery ids whose window has ended; returns how many. */
export async function pruneDeliveries(manager: EntityManager): Promise<number> {
  const rows = returningRows<unknown>(
    await manager.query(`DELETE FROM hook_deliveries WHERE first_seen_at < now() - make_interval(hours => ${DELIVERY_DEDUPE_HOURS}) RETURNING 1`),
  );
  return rows.length;
}
