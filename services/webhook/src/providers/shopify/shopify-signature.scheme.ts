import { createHmac, timingSafeEqual } from 'node:crypto';
import type { DeliveryScheme, IncomingDelivery, Verification } from '@runline/signatures';

/**
 * The headers of a Shopify webhook delivery over HTTPS, as listed in "Webhooks delivery
 * structure", section Headers (https://shopify.dev/docs/apps/build/webhooks/delivery-structure)
 * and read by Shopify's own library (Shopify/shopify-app-js,
 * packages/apps/shopify-api/lib/webhooks/header-names.ts). Lower case: the gateway hands
 * headers over that way.
 */
export const SHOPIFY_HMAC_HEADER = 'x-shopify-hmac-sha256';
export const SHOPIFY_WEBHOOK_ID_HEADER = 'x-shopify-webhook-id';
export const SHOPIFY_TOPIC_HEADER = 'x-shopify-topic';
export const SHOPIFY_SHOP_DOMAIN_HEADER = 'x-shopify-shop-domain';

/**
 * Standard base64 of a 32-byte digest: 43 characters and one `=`. Anything else cannot be an
 * HMAC-SHA256 and is refused before any compare, so the compare always sees 32 bytes.
 */
const BASE64_SHA256 = /^[A-Za-z0-9+/]{42}[AEIMQUYcgkosw048]=$/;
const MAX_DELIVERY_ID_LENGTH = 200;
const MAX_TOPIC_LENGTH = 100;

/**
 * Shopify's delivery signature, as "Verify webhook deliveries", section HMAC verification
 * (https://shopify.dev/docs/apps/build/webhooks/verify-deliveries) describes it:
 * `X-Shopify-Hmac-SHA256` is the base64 HMAC-SHA256 of the raw request body, keyed with the
 * app's client secret (the `apiSecret` of the credentials). There is no timestamp in what is
 * signed; replays are caught by the delivery id (`X-Shopify-Webhook-Id`), which the docs name as
 * the key for detecting duplicates and which we keep for 24 hours.
 *
 * As Shopify's library does (lib/utils/hmac-validator.ts), an empty body is never verified: a
 * Shopify delivery always carries its JSON payload. The compare is constant time: the header is
 * decoded to exactly 32 bytes and compared with the 32-byte digest by `timingSafeEqual`.
 */
export class ShopifySignatureScheme implements DeliveryScheme {
  verify(delivery: IncomingDelivery, secret: string): Verification {
    const given = parseShopifyHmac(delivery.headers[SHOPIFY_HMAC_HEADER]);
    if (given === null || delivery.rawBody.length === 0) return { ok: false, failure: 'invalid-signature' };
    const expected = shopifyHmacDigest(secret, delivery.rawBody);
    return timingSafeEqual(expected, given) ? { ok: true } : { ok: false, failure: 'invalid-signature' };
  }

  deliveryIdOf(delivery: IncomingDelivery): string | null {
    const id = delivery.headers[SHOPIFY_WEBHOOK_ID_HEADER]?.trim();
    return id ? id.slice(0, MAX_DELIVERY_ID_LENGTH) : null;
  }

  /** The topic as Shopify names it in deliveries (`orders/create`). */
  eventNameOf(delivery: IncomingDelivery): string | null {
    const topic = delivery.headers[SHOPIFY_TOPIC_HEADER]?.trim();
    return topic ? topic.slice(0, MAX_TOPIC_LENGTH) : null;
  }
}

/** The 32 bytes an `X-Shopify-Hmac-Sha256` value stands for, or null when it is not the base64 of 32 bytes. */
export function parseShopifyHmac(header: string | undefined): Buffer | null {
  const value = header?.trim() ?? '';
  return BASE64_SHA256.test(value) ? Buffer.from(value, 'base64') : null;
}

function shopifyHmacDigest(secret: string, rawBody: Uint8Array): Buffer {
  return createHmac('sha256', secret).update(rawBody).digest();
}
