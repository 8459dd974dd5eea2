/**
 * A delivery as it reached us: the raw bytes the sender signed, its headers (lower-case names)
 * and when the gateway received it.
 */
export interface IncomingDelivery {
  rawBody: Uint8Array;
  headers: Readonly<Record<string, string>>;
  receivedAt: Date;
}

/** Why a delivery was not accepted as signed. */
export type VerificationFailure = 'invalid-signature' | 'stale-timestamp';

export type Verification = { ok: true } | { ok: false; failure: VerificationFailure };

/**
 * How one kind of sender signs and names its deliveries. The inbound hook's own scheme
 * (X-Runline-Signature) is the first; each managed provider (Stripe, Shopify, GitHub) plugs in
 * as another implementation with its own headers.
 *
 * `verify` never throws: anything malformed is simply not verified.
 */
export interface DeliveryScheme {
  verify(delivery: IncomingDelivery, secret: string): Verification;
  /** The sender's id of this delivery, for dedupe; null when it sent none. */
  deliveryIdOf(delivery: IncomingDelivery): string | null;
  /** The sender's event name (a provider's event type); null when the scheme has none. */
  eventNameOf(delivery: IncomingDelivery): string | null;
}
