import { createHmac, timingSafeEqual } from 'node:crypto';
import type { DeliveryScheme, IncomingDelivery, Verification } from '@runline/signatures';

export const STRIPE_SIGNATURE_HEADER = 'stripe-signature';

/** Stripe's own default tolerance (https://docs.stripe.com/webhooks#verify-manually, step 5: 5 minutes). */
export const STRIPE_TOLERANCE_SECONDS = 300;

/** Unix seconds, no sign or fraction. */
const TIMESTAMP = /^[0-9]{1,12}$/;
/** A v1 signature: the lowercase hex HMAC-SHA256, exactly 64 digits. */
const V1_SIGNATURE = /^[0-9a-f]{64}$/;
/** A header longer than this is not Stripe's (one t, a few v1 during a rotation). */
const MAX_HEADER_LENGTH = 4096;
/** v1 values compared at most (a secret rotation sends two; Stripe documents no more). */
const MAX_V1_SIGNATURES = 8;
const MAX_DELIVERY_ID_LENGTH = 200;

/** The parts of a Stripe-Signature header we use, or null when it is not one. */
export interface StripeSignatureHeader {
  timestamp: string;
  /** The v1 signatures as 32-byte digests (other schemes, such as Stripe's test-only v0, are ignored). */
  signatures: Buffer[];
}

/**
 * Parses `Stripe-Signature: t=<unix seconds>,v1=<hex>[,v1=<hex>…][,v0=…]` as Stripe documents it
 * (https://docs.stripe.com/webhooks#verify-manually, "Step 1: Extract the timestamp and
 * signatures from the header": split on `,`, then each element on `=`; `t` is the timestamp, `v1`
 * the signatures; other elements are discarded). Stricter than Stripe's own parser where an
 * attacker could play: exactly one `t`, every v1 exactly 64 lowercase hex digits, bounded length.
 * Never throws.
 */
export function parseStripeSignature(header: string | undefined): StripeSignatureHeader | null {
  if (header === undefined || header.length > MAX_HEADER_LENGTH) return null;
  let timestamp: string | null = null;
  const signatures: Buffer[] = [];
  for (const element of header.split(',')) {
    const separator = element.indexOf('=');
    if (separator < 0) continue;
    const key = element.slice(0, separator).trim();
    const value = element.slice(separator + 1).trim();
    if (key === 't') {
      if (timestamp !== null || !TIMESTAMP.test(value)) return null;
      timestamp = value;
    } else if (key === 'v1') {
      if (!V1_SIGNATURE.test(value)) continue;
      if (signatures.length >= MAX_V1_SIGNATURES) return null;
      signatures.push(Buffer.from(value, 'hex'));
    }
  }
  if (timestamp === null || signatures.length === 0) return null;
  return { timestamp, signatures };
}

/** The v1 digest Stripe computes: HMAC-SHA256 with the endpoint's secret of `<t>.<raw body>` (step 2-3). */
export function stripeSignatureDigest(secret: string, timestamp: string, rawBody: Uint8Array): Buffer {
  return createHmac('sha256', secret).update(`${timestamp}.`).update(rawBody).digest();
}

/**
 * Stripe's delivery signature (https://docs.stripe.com/webhooks#verify-events and
 * #verify-manually). Any of the v1 signatures may match: while a rolled secret is still valid,
 * Stripe signs with both, so the header carries two (#roll-endpoint-secrets). Each compare is
 * timingSafeEqual on two 32-byte digests, and every v1 is compared, matched or not. The
 * signature is checked before the timestamp, so "Timestamp outside the tolerance" is only said
 * to the holder of the secret; the tolerance applies both ways (Stripe's libraries reject only
 * old timestamps; a clock far ahead is refused here too).
 *
 * The delivery id is the Event object's `id` (`evt_…`) and the event name its `type`, both in the
 * JSON body (https://docs.stripe.com/api/events/object): Stripe sends no header for them.
 */
export class StripeSignatureScheme implements DeliveryScheme {
  constructor(private readonly toleranceSeconds: number = STRIPE_TOLERANCE_SECONDS) {}

  verify(delivery: IncomingDelivery, secret: string): Verification {
    const header = parseStripeSignature(delivery.headers[STRIPE_SIGNATURE_HEADER]);
    if (!header || secret === '') return { ok: false, failure: 'invalid-signature' };
    const expected = stripeSignatureDigest(secret, header.timestamp, delivery.rawBody);
    let matched = false;
    for (const signature of header.signatures) matched = timingSafeEqual(expected, signature) || matched;
    if (!matched) return { ok: false, failure: 'invalid-signature' };
    const skew = Math.abs(delivery.receivedAt.getTime() / 1000 - Number(header.timestamp));
    if (skew > this.toleranceSeconds) return { ok: false, failure: 'stale-timestamp' };
    return { ok: true };
  }

  deliveryIdOf(delivery: IncomingDelivery): string | null {
    const id = eventField(delivery, 'id');
    return id ? id.slice(0, MAX_DELIVERY_ID_LENGTH) : null;
  }

  eventNameOf(delivery: IncomingDelivery): string | null {
    return eventField(delivery, 'type');
  }
}

/** A top-level string field of the Event in the body, or null (not JSON, not an object, not a string). */
function eventField(delivery: IncomingDelivery, field: 'id' | 'type'): string | null {
  let event: unknown;
  try {
    event = JSON.parse(Buffer.from(delivery.rawBody.buffer, delivery.rawBody.byteOffset, delivery.rawBody.byteLength).toString('utf8'));
  } catch {
    return null;
  }
  if (event === null || typeof event !== 'object' || Array.isArray(event)) return null;
  const value = (event as Record<string, unknown>)[field];
  return typeof value === 'string' && value !== '' ? value : null;
}
