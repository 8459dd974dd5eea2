import { randomUUID } from 'node:crypto';
import type { EntityManager } from 'typeorm';
import { returningRows } from '@runline/db';

/** The dedupe window of X-Runline-Delivery (DESIGN section 9). */
export const DELIVERY_DEDUPE_HOURS = 24;

/**
 * The idempotency key for a hook's delivery id: the one handed out at its first arrival when
 * that was within the dedupe window, else a new one (and the window starts again). Concurrent
 * arrivals of the same id get the same key: the primary key serializes them.
 */
export async function deliveryKeyOf(manager: EntityManager, hookId: string, deliveryId: string): Promise<string> {
  const claimed = returningRows<{ delivery_key: string }>(
    await manager.query(
    `INSERT INTO hook_deliveries (hook_id, delivery_id, delivery_key, first_seen_at) VALUES ($1, $2, $3, now())
     ON CONFLICT (hook_id, delivery_id) DO UPDATE SET delivery_key = EXCLUDED.delivery_key, first_seen_at = EXCLUDED.first_seen_at
      WHERE hook_deliveries.first_seen_at < now() - make_interval(hours => ${DELIVERY_DEDUPE_HOURS})
     RETURNING delivery_key`,
      [hookId, deliveryId, randomUUID()],
    ),
  );
  if (claimed[0]) return claimed[0].delivery_key;
  // Seen within the window: a statement of its own sees the row even if it was committed just now.
  const seen: Array<{ delivery_key: string }> = await manager.query(`SELECT delivery_key FROM hook_deliveries WHERE hook_id = $1 AND delivery_id = $2`, [hookId, deliveryId]);
  if (!seen[0]) throw new Error('delivery id vanished between claim and read');
  return seen[0].delivery_key;
}

/** Deletes delivery ids whose window has ended; returns how many. */
export async function pruneDeliveries(manager: EntityManager): Promise<number> {
  const rows = returningRows<unknown>(
    await manager.query(`DELETE FROM hook_deliveries WHERE first_seen_at < now() - make_interval(hours => ${DELIVERY_DEDUPE_HOURS}) RETURNING 1`),
  );
  return rows.length;
}
