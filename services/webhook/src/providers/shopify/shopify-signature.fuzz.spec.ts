import { createHmac } from 'node:crypto';
import fc from 'fast-check';
import { fuzzParameters } from '@runline/testing';
import type { IncomingDelivery } from '@runline/signatures';
import { ShopifySignatureScheme, parseShopifyHmac } from './shopify-signature.scheme.js';

const SECRET = 'shopify-app-client-secret';
const scheme = new ShopifySignatureScheme();

/** Signed as https://shopify.dev/docs/apps/build/webhooks/verify-deliveries shows: base64 HMAC-SHA256 of the raw body. */
const shopifySign = (body: Uint8Array, secret = SECRET) => createHmac('sha256', secret).update(body).digest('base64');

const deliveryOf = (headers: Record<string, string>, body: Uint8Array): IncomingDelivery => ({ rawBody: body, headers, receivedAt: new Date() });

/** Header values an attacker might send: any text, base64 of any length, near misses of a real signature. */
const headerValue = (real: string) =>
  fc.oneof(
    fc.string({ maxLength: 200 }),
    fc.string({ unit: 'binary', maxLength: 100 }),
    fc.base64String({ maxLength: 120 }),
    fc.uint8Array({ minLength: 0, maxLength: 64 }).map((bytes) => Buffer.from(bytes).toString('base64')),
    fc.uint8Array({ minLength: 0, maxLength: 64 }).map((bytes) => Buffer.from(bytes).toString('hex')),
    fc.constant(real.toLowerCase()),
    fc.constant(`sha256=${real}`),
    fc.constant(`${real},${real}`),
    fc.constant(real.replace(/=$/, '')),
  );

describe('Shopify signature parser (fuzz)', () => {
  it('never throws and never verifies a header that is not the signature of the body', () => {
    const signedCase = fc
      .tuple(fc.uint8Array({ maxLength: 512 }), fc.string({ minLength: 1, maxLength: 64 }))
      .chain(([body, secret]) => {
        const real = shopifySign(body, secret);
        const others = fc.dictionary(fc.string({ maxLength: 30 }), fc.string({ maxLength: 60 }), { maxKeys: 5 });
        return fc.tuple(fc.constant(body), fc.constant(secret), fc.constant(real), headerValue(real), others);
      });
    fc.assert(
      fc.property(signedCase, ([body, secret, real, value, others]) => {
        const headers = { ...others, 'x-shopify-hmac-sha256': value };
        const result = scheme.verify(deliveryOf(headers, body), secret);
        const isReal = value.trim() === real && body.length > 0;
        expect(result).toEqual(isReal ? { ok: true } : { ok: false, failure: 'invalid-signature' });
        expect(() => scheme.deliveryIdOf(deliveryOf(headers, body))).not.toThrow();
        expect(() => scheme.eventNameOf(deliveryOf(headers, body))).not.toThrow();
      }),
      fuzzParameters(3000),
    );
  });

  it('refuses every one-character change of a valid signature', () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 1, maxLength: 256 }), fc.nat(43), fc.constantFrom(...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/='), (body, at, char) => {
        const real = shopifySign(body);
        const changed = real.slice(0, at) + char + real.slice(at + 1);
        fc.pre(changed !== real);
        expect(scheme.verify(deliveryOf({ 'x-shopify-hmac-sha256': changed }, body), SECRET)).toEqual({ ok: false, failure: 'invalid-signature' });
      }),
      fuzzParameters(1000),
    );
  });

  it('refuses a valid signature sent with any other body', () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 1, maxLength: 256 }), fc.uint8Array({ maxLength: 256 }), (signed, sent) => {
        fc.pre(!Buffer.from(signed).equals(Buffer.from(sent)));
        expect(scheme.verify(deliveryOf({ 'x-shopify-hmac-sha256': shopifySign(signed) }, sent), SECRET).ok).toBe(false);
      }),
      fuzzParameters(500),
    );
  });

  /**
   * The compare is constant time because it only ever sees two 32-byte values: whatever the
   * attacker sends either fails the format check (before any compare, in time that depends on
   * the header alone, not on the secret) or decodes to exactly 32 bytes for timingSafeEqual.
   */
  it('hands the compare exactly 32 bytes or nothing, whatever the header', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string({ maxLength: 100 }), fc.base64String({ maxLength: 100 }), fc.uint8Array({ maxLength: 64 }).map((b) => Buffer.from(b).toString('base64'))), (header) => {
        const parsed = parseShopifyHmac(header);
        expect(parsed === null || parsed.length === 32).toBe(true);
      }),
      fuzzParameters(5000),
    );
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 32, maxLength: 32 }), (digest) => {
        expect(parseShopifyHmac(Buffer.from(digest).toString('base64'))?.equals(Buffer.from(digest))).toBe(true);
      }),
      fuzzParameters(),
    );
  });
});
