import { createHash } from 'node:crypto';

/**
 * The idempotency key a delivery's run starts with, derived from the hook (or subscription) and
 * the sender's delivery id: the same delivery always gets the same key, so naming it costs no
 * write wherever the delivery is verified. The dedupe itself happens where the run is recorded:
 * the invocation service takes the key in the transaction that records the run, so a repeated
 * or racing copy of the delivery finds the first run (409), and a delivery is claimed by the
 * very commit that makes its run durable (no claim of its own to commit first, none left
 * behind by a crash in between).
 *
 * Shaped as a UUID (version 8, RFC 9562's layout for custom content) from SHA-256, so the run's
 * key reads `hook:<uuid>` as before. The hook id is a UUID (no newline, so the two never run
 * together), lower-cased: ids are compared as UUIDs.
 */
export function deliveryKeyOf(hookId: string, deliveryId: string): string {
  const bytes = createHash('sha256').update(`${hookId.toLowerCase()}\n${deliveryId}`).digest().subarray(0, 16);
  bytes[6] = (bytes[6]! & 0x0f) | 0x80;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
