/**
 * `@runline/signatures`: how a delivery to `/v1/hooks/{id}` proves who sent it, and what names
 * it, in one place for every service that checks one (the gateway verifies inbound hooks from
 * its copy of them; the webhook service verifies managed subscriptions, and still answers
 * VerifyDelivery for hooks).
 *
 * - `DeliveryScheme` is the contract of a sender's scheme: `verify` a delivery with a secret
 *   (never throws), read its delivery id and event name. The inbound hook's own scheme is
 *   `RunlineSignatureScheme` (DESIGN section 9: `X-Runline-Signature`, optional
 *   `X-Runline-Timestamp` within a tolerance, `X-Runline-Delivery`); the providers' schemes
 *   (Stripe, Shopify, GitHub) implement the same interface in the webhook service.
 * - `runlineSignature` is the header value a sender computes (tests and benchmarks sign with it).
 * - `deliveryKeyOf` turns a hook (or subscription) id and the sender's delivery id into the
 *   idempotency key its run starts with, so a repeat finds the first run.
 * - `verifyInboundHookDelivery` is the checks of a delivery to an inbound hook in their order
 *   (revoked, signature, timestamp, delivery key), wherever the hook is held.
 * - `DELIVERY_VERDICTS_METRIC` is the counter both services count their verdicts under.
 */
export type { DeliveryScheme, IncomingDelivery, Verification, VerificationFailure } from './delivery-scheme.js';
export {
  DELIVERY_HEADER,
  RunlineSignatureScheme,
  runlineSignature,
  runlineSignatureDigest,
  SIGNATURE_HEADER,
  TIMESTAMP_HEADER,
} from './runline-signature.scheme.js';
export { deliveryKeyOf } from './delivery-key.js';
export { verifyInboundHookDelivery, type InboundHookVerdict } from './inbound-hook-verdict.js';
export { DELIVERY_VERDICTS_METRIC, type DeliveryVerdictLabel } from './delivery-verdicts.js';
