import { createHmac, timingSafeEqual } from 'node:crypto';
import type { DeliveryScheme, IncomingDelivery, Verification } from './delivery-scheme.js';

export const SIGNATURE_HEADER = 'x-runline-signature';
export const TIMESTAMP_HEADER = 'x-runline-timestamp';
export const DELIVERY_HEADER = 'x-runline-delivery';

/** `sha256=` and exactly 64 lowercase hex digits: anything else is not a signature of ours. */
const SIGNATURE = /^sha256=([0-9a-f]{64})$/;
/** Unix seconds, no sign, no fraction, no leading garbage. */
const TIMESTAMP = /^[0-9]{1,12}$/;
/** Longer delivery ids are cut: the id is a dedupe key, not data. */
const MAX_DELIVERY_ID_LENGTH = 200;

/**
 * The inbound hook's signature (DESIGN section 9): `X-Runline-Signature: sha256=<hex>`, the
 * lowercase hex HMAC-SHA256 with the hook's secret of the raw body, or of
 * `<timestamp>.<raw body>` when `X-Runline-Timestamp` is sent, which must then be within the
 * tolerance of the time the delivery was received.
 *
 * The signature is checked before the timestamp, so "Timestamp outside the tolerance" is only
 * ever said to someone who holds the secret. The compare is constant time (timingSafeEqual on
 * two 32-byte digests).
 */
export class RunlineSignatureScheme implements DeliveryScheme {
  constructor(private readonly toleranceSeconds: number) {}

  verify(delivery: IncomingDelivery, secret: string): Verification {
    const signature = SIGNATURE.exec(delivery.headers[SIGNATURE_HEADER]?.trim() ?? '');
    if (!signature) return { ok: false, failure: 'invalid-signature' };
    const timestamp = delivery.headers[TIMESTAMP_HEADER]?.trim();
    if (timestamp !== undefined && !TIMESTAMP.test(timestamp)) return { ok: false, failure: 'invalid-signature' };

    const expected = runlineSignatureDigest(secret, delivery.rawBody, timestamp);
    const given = Buffer.from(signature[1]!, 'hex');
    if (!timingSafeEqual(expected, given)) return { ok: false, failure: 'invalid-signature' };

    if (timestamp !== undefined) {
      const skew = Math.abs(delivery.receivedAt.getTime() / 1000 - Number(timestamp));
      if (skew > this.toleranceSeconds) return { ok: false, failure: 'stale-timestamp' };
    }
    return { ok: true };
  }

  deliveryIdOf(delivery: IncomingDelivery): string | null {
    const id = delivery.headers[DELIVERY_HEADER]?.trim();
    return id ? id.slice(0, MAX_DELIVERY_ID_LENGTH) : null;
  }

  eventNameOf(): string | null {
    return null;
  }
}

/** The HMAC-SHA256 a sender computes: of `<timestamp>.<body>` with a timestamp, else of the body. */
export function runlineSignatureDigest(secret: string, rawBody: Uint8Array, timestamp?: string): Buffer {
  const hmac = createHmac('sha256', secret);
  if (timestamp !== undefined) hmac.update(`${timestamp}.`);
  return hmac.update(rawBody).digest();
}

/** The header value a sender puts in X-Runline-Signature. */
export function runlineSignature(secret: string, rawBody: Uint8Array | string, timestamp?: string): string {
  const bytes = typeof rawBody === 'string' ? Buffer.from(rawBody, 'utf8') : rawBody;
  return `sha256=${runlineSignatureDigest(secret, bytes, timestamp).toString('hex')}`;
}
