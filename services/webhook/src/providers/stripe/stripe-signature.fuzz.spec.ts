import fc from 'fast-check';
import Stripe from 'stripe';
import { fuzzParameters } from '@runline/testing';
import { parseStripeSignature, StripeSignatureScheme } from './stripe-signature.scheme.js';

const SECRET = 'whsec_fuzz_0123456789abcdefghijklmnop';
const NOW = new Date('2030-01-01T00:00:00.000Z');
const NOW_SECONDS = NOW.getTime() / 1000;
const scheme = new StripeSignatureScheme();
const stripe = new Stripe('sk_test_signing_only');

/** Header-like text: Stripe's own pieces (t=, v1=, v0=, commas, hex) mixed with anything at all. */
const headerPiece = fc.oneof(
  fc.string(),
  fc.constantFrom('t=', 'v1=', 'v0=', ',', '=', ' ', 't=1893456000', '\u0000', '\uffff'),
  fc.stringMatching(/^[0-9a-f]{0,70}$/),
  fc.integer().map((n) => `t=${n}`),
  fc.stringMatching(/^[0-9a-f]{64}$/).map((hex) => `v1=${hex}`),
);
const headers = fc.array(headerPiece, { maxLength: 24 }).map((pieces) => pieces.join(''));
const bodies = fc.oneof(fc.string(), fc.json(), fc.uint8Array({ maxLength: 512 }).map((bytes) => Buffer.from(bytes).toString('latin1')));

describe('Stripe-Signature under fuzzing', () => {
  it('never throws and never verifies a header nobody signed with the secret', () => {
    fc.assert(
      fc.property(headers, bodies, (header, body) => {
        const verdict = scheme.verify({ rawBody: Buffer.from(body, 'utf8'), headers: { 'stripe-signature': header }, receivedAt: NOW }, SECRET);
        expect(verdict.ok).toBe(false);
        scheme.deliveryIdOf({ rawBody: Buffer.from(body, 'utf8'), headers: {}, receivedAt: NOW });
        scheme.eventNameOf({ rawBody: Buffer.from(body, 'utf8'), headers: {}, receivedAt: NOW });
      }),
      fuzzParameters(2000),
    );
  });

  it('hands the compare only fixed-length 32-byte digests, at most 8, whatever the header', () => {
    fc.assert(
      fc.property(headers, (header) => {
        const parsed = parseStripeSignature(header);
        if (parsed === null) return;
        expect(parsed.signatures.length).toBeGreaterThan(0);
        expect(parsed.signatures.length).toBeLessThanOrEqual(8);
        for (const digest of parsed.signatures) expect(digest.length).toBe(32);
        expect(parsed.timestamp).toMatch(/^[0-9]{1,12}$/);
      }),
      fuzzParameters(2000),
    );
  });

  // Elements of other names (not t, not v…) are discarded, as Stripe's docs say.
  it('a real signature still verifies with garbage elements around it, and stops verifying when the body changes', () => {
    fc.assert(
      fc.property(fc.json(), fc.array(fc.stringMatching(/^[a-suw-z][a-z0-9]{0,5}=[^,]{0,20}$/), { maxLength: 4 }), (body, noise) => {
        const [t, v1] = stripe.webhooks.generateTestHeaderString({ payload: body, secret: SECRET, timestamp: NOW_SECONDS }).split(',');
        const header = [t, ...noise, v1].join(',');
        const at = { headers: { 'stripe-signature': header }, receivedAt: NOW };
        expect(scheme.verify({ ...at, rawBody: Buffer.from(body, 'utf8') }, SECRET)).toEqual({ ok: true });
        expect(scheme.verify({ ...at, rawBody: Buffer.from(`${body} `, 'utf8') }, SECRET).ok).toBe(false);
      }),
      fuzzParameters(300),
    );
  });
});
