import { createHmac } from 'node:crypto';
import type { IncomingDelivery } from '@runline/signatures';
import { ShopifySignatureScheme } from './shopify-signature.scheme.js';

const SECRET = 'shopify-app-client-secret';
const BODY = '{"id":450789469,"email":"jon@example.com","total_price":"254.98"}';

function delivery(headers: Record<string, string>, body: string | Buffer = BODY): IncomingDelivery {
  return { rawBody: typeof body === 'string' ? Buffer.from(body, 'utf8') : body, headers, receivedAt: new Date() };
}

/**
 * Signed as Shopify's documentation shows it, independently of the code under test: "compute
 * HMAC-SHA256 of the raw request body using your app's client secret as the key", base64
 * ("Verify webhook deliveries", section HMAC verification,
 * https://shopify.dev/docs/apps/build/webhooks/verify-deliveries). Shopify's own library
 * (@shopify/shopify-api) needs Node 22, so it cannot sign here.
 */
function shopifySign(body: string | Buffer, secret = SECRET): string {
  return createHmac('sha256', secret).update(body).digest('base64');
}

const refused = { ok: false, failure: 'invalid-signature' };

describe('ShopifySignatureScheme', () => {
  const scheme = new ShopifySignatureScheme();

  it('verifies the base64 HMAC-SHA256 of the raw body with the app secret', () => {
    expect(scheme.verify(delivery({ 'x-shopify-hmac-sha256': shopifySign(BODY) }), SECRET)).toEqual({ ok: true });
  });

  it('verifies raw bytes as sent, not a re-encoding of them', () => {
    const bytes = Buffer.from([0x7b, 0x22, 0x6e, 0x22, 0x3a, 0x22, 0xc3, 0xa9, 0xff, 0x22, 0x7d]); // not valid UTF-8
    expect(scheme.verify(delivery({ 'x-shopify-hmac-sha256': shopifySign(bytes) }, bytes), SECRET)).toEqual({ ok: true });
  });

  it('refuses a changed body, another secret, a hex digest and an empty body', () => {
    const good = shopifySign(BODY);
    expect(scheme.verify(delivery({ 'x-shopify-hmac-sha256': good }, `${BODY} `), SECRET)).toEqual(refused);
    expect(scheme.verify(delivery({ 'x-shopify-hmac-sha256': good }), `${SECRET}x`)).toEqual(refused);
    const hex = createHmac('sha256', SECRET).update(BODY).digest('hex');
    expect(scheme.verify(delivery({ 'x-shopify-hmac-sha256': hex }), SECRET)).toEqual(refused);
    expect(scheme.verify(delivery({ 'x-shopify-hmac-sha256': shopifySign('') }, ''), SECRET)).toEqual(refused);
  });

  it('refuses missing and malformed signature headers', () => {
    const good = shopifySign(BODY);
    const urlSafe = good.replace(/\+/g, '-').replace(/\//g, '_');
    const malformed = ['', good.slice(0, -1), `${good}=`, `${good}A`, good.slice(1), `sha256=${good}`, 'x'.repeat(44), '='.repeat(44), `${good.slice(0, 42)}B=`];
    if (urlSafe !== good) malformed.push(urlSafe);
    for (const header of malformed) {
      expect(scheme.verify(delivery({ 'x-shopify-hmac-sha256': header }), SECRET)).toEqual(refused);
    }
    expect(scheme.verify(delivery({}), SECRET)).toEqual(refused);
    // The header names another provider's scheme.
    expect(scheme.verify(delivery({ 'x-hub-signature-256': good }), SECRET)).toEqual(refused);
  });

  it('ignores spaces around the header value', () => {
    expect(scheme.verify(delivery({ 'x-shopify-hmac-sha256': ` ${shopifySign(BODY)} ` }), SECRET)).toEqual({ ok: true });
  });

  it('reads the delivery id from X-Shopify-Webhook-Id and the event from X-Shopify-Topic', () => {
    const headers = { 'x-shopify-webhook-id': ' b54557e4-bdd9-4b37-8a5f-bf7d70bcd043 ', 'x-shopify-topic': 'orders/create' };
    expect(scheme.deliveryIdOf(delivery(headers))).toBe('b54557e4-bdd9-4b37-8a5f-bf7d70bcd043');
    expect(scheme.eventNameOf(delivery(headers))).toBe('orders/create');
    expect(scheme.deliveryIdOf(delivery({ 'x-shopify-webhook-id': ' ' }))).toBeNull();
    expect(scheme.deliveryIdOf(delivery({}))).toBeNull();
    expect(scheme.eventNameOf(delivery({}))).toBeNull();
    expect(scheme.deliveryIdOf(delivery({ 'x-shopify-webhook-id': 'x'.repeat(500) }))?.length).toBe(200);
    expect(scheme.eventNameOf(delivery({ 'x-shopify-topic': 'x'.repeat(500) }))?.length).toBe(100);
  });
});
