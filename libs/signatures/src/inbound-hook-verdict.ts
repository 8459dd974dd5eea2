import { deliveryKeyOf } from './delivery-key.js';
import type { IncomingDelivery, VerificationFailure } from './delivery-scheme.js';
import type { RunlineSignatureScheme } from './runline-signature.scheme.js';

/**
 * What a delivery to an inbound hook comes to. A verified one carries the idempotency key its run
 * starts with; empty when the sender named no delivery (no dedupe).
 */
export type InboundHookVerdict = { verdict: 'revoked' | VerificationFailure } | { verdict: 'verified'; deliveryKey: string };

/**
 * The checks of a delivery to an inbound hook, in their order (README "Inbound webhooks"): a
 * revoked hook is refused whatever the signature, then the signature (the scheme checks it before
 * the timestamp), then the delivery id becomes the run's key. `openSecret` is called only for an
 * active hook, so a revoked hook's secret is never opened.
 */
export function verifyInboundHookDelivery(
  hook: { id: string; active: boolean },
  openSecret: () => string,
  delivery: IncomingDelivery,
  scheme: RunlineSignatureScheme,
): InboundHookVerdict {
  if (!hook.active) return { verdict: 'revoked' };
  const verification = scheme.verify(delivery, openSecret());
  if (!verification.ok) return { verdict: verification.failure };
  const deliveryId = scheme.deliveryIdOf(delivery);
  return { verdict: 'verified', deliveryKey: deliveryId === null ? '' : deliveryKeyOf(hook.id, deliveryId) };
}
