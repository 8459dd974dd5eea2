import { createHmac, timingSafeEqual } from 'node:crypto';
import { sign, verify } from '@octokit/webhooks-methods';
import fc from 'fast-check';
import { fuzzParameters } from '@runline/testing';
import type { IncomingDelivery } from '@runline/signatures';
import { GithubSignatureScheme, parseGithubSignature } from './github-signature.scheme.js';

const scheme = new GithubSignatureScheme();
const deliveryOf = (headers: Record<string, string>, body: Uint8Array): IncomingDelivery => ({ rawBody: body, headers, receivedAt: new Date() });
const text = (bytes: Uint8Array) => Buffer.from(bytes).toString('utf8');

/** Any well-formed signature; built once, as fast-check compiles the pattern. */
const wellFormed = fc.stringMatching(/^sha256=[0-9a-f]{64}$/);

/** What an attacker might put in X-Hub-Signature-256, given the real value: any text, hex of any length, near misses. */
const forgedHeader = (real: string) => {
  const hex = real.slice('sha256='.length);
  return fc.oneof(
    fc.string({ maxLength: 200 }),
    fc.string({ unit: 'binary', maxLength: 120 }),
    fc.uint8Array({ maxLength: 80 }).map((bytes) => `sha256=${Buffer.from(bytes).toString('hex')}`),
    wellFormed,
    fc.integer({ min: 0, max: 63 }).map((at) => `sha256=${hex.slice(0, at)}${hex[at] === '0' ? '1' : '0'}${hex.slice(at + 1)}`),
    fc.constant(hex),
    fc.constant(`sha1=${hex}`),
    fc.constant(`${real}${real}`),
    fc.constant(`${real}0`),
    fc.constant(real.slice(0, -1)),
  );
};

describe('GitHub signature parser (fuzz)', () => {
  it('never throws on any headers and body, and verifies only the real signature of that body', async () => {
    // Sign first (sign is async), check after: fast-check's property runs synchronously. sign()
    // wants a non-empty payload, as GitHub never sends an empty one.
    const samples = fc.sample(fc.tuple(fc.uint8Array({ minLength: 1, maxLength: 512 }), fc.string({ minLength: 1, maxLength: 64 })), fuzzParameters(150));
    const signed = await Promise.all(samples.map(async ([bytes, secret]) => ({ body: Buffer.from(text(bytes), 'utf8'), secret, real: await sign(secret, text(bytes)) })));
    for (const [index, { body, secret, real }] of signed.entries()) {
      expect(scheme.verify(deliveryOf({ 'x-hub-signature-256': real }, body), secret)).toEqual({ ok: true });
      fc.assert(
        fc.property(forgedHeader(real), fc.dictionary(fc.string({ maxLength: 30 }), fc.string({ maxLength: 60 }), { maxKeys: 5 }), (value, others) => {
          const headers = { ...others, 'x-hub-signature-256': value };
          const result = scheme.verify(deliveryOf(headers, body), secret);
          const same = parseGithubSignature(value);
          const isReal = same !== null && timingSafeEqual(same, parseGithubSignature(real)!);
          expect(result).toEqual(isReal ? { ok: true } : { ok: false, failure: 'invalid-signature' });
          scheme.deliveryIdOf(deliveryOf(headers, body));
          scheme.eventNameOf(deliveryOf(headers, body));
        }),
        // A seed of its own per sample, so each signature meets other forgeries.
        fuzzParameters(40, index + 1),
      );
    }
  });

  it('agrees with GitHub’s own verifier (@octokit/webhooks-methods verify) on every header', async () => {
    const cases = fc.sample(
      fc
        .tuple(fc.string({ minLength: 1, maxLength: 300 }), fc.string({ minLength: 1, maxLength: 64 }))
        .chain(([payload, secret]) => {
          const real = `sha256=${createHmac('sha256', secret).update(payload).digest('hex')}`;
          return fc.tuple(fc.constant(payload), fc.constant(secret), fc.oneof(fc.constant(real), fc.constant(`sha256=${real.slice(7).toUpperCase()}`), fc.constant(real.replace('sha256=', 'sha256=0')), forgedHeader(real)));
        }),
      fuzzParameters(3000),
    );
    for (const [payload, secret, header] of cases) {
      // octokit's verify throws on an empty signature (a missing header); ours says no, tested above.
      if (header === '') continue;
      const ours = scheme.verify(deliveryOf({ 'x-hub-signature-256': header }, Buffer.from(payload, 'utf8')), secret).ok;
      expect({ payload, secret, header, ours }).toEqual({ payload, secret, header, ours: await verify(secret, payload, header) });
    }
  });

  it('never throws on arbitrary header maps, bodies and secrets', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string({ maxLength: 40 }), fc.string({ unit: 'binary', maxLength: 200 }), { maxKeys: 8 }), fc.uint8Array({ maxLength: 1024 }), fc.string({ maxLength: 80 }), (headers, body, secret) => {
        const delivery = deliveryOf(headers, body);
        expect(() => scheme.verify(delivery, secret)).not.toThrow();
        expect(scheme.verify(delivery, secret).ok).toBe(false);
        expect(() => scheme.deliveryIdOf(delivery)).not.toThrow();
        expect(() => scheme.eventNameOf(delivery)).not.toThrow();
      }),
      fuzzParameters(500),
    );
  });

  /**
   * The compare is constant time because it only ever sees two 32-byte values: whatever is sent
   * either fails the format check (before any compare, in time that depends on the header
   * alone, never on the secret) or decodes to exactly 32 bytes, which timingSafeEqual compares
   * with our 32-byte digest (it would throw on two lengths; verify never throws, above).
   */
  it('hands the compare exactly 32 bytes or nothing, whatever the header', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string({ maxLength: 100 }), fc.stringMatching(/^sha256=[0-9a-fA-F]{0,80}$/), fc.uint8Array({ maxLength: 64 }).map((b) => `sha256=${Buffer.from(b).toString('hex')}`)), (header) => {
        const parsed = parseGithubSignature(header);
        expect(parsed === null || parsed.length === 32).toBe(true);
      }),
      fuzzParameters(5000),
    );
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 32, maxLength: 32 }), (digest) => {
        expect(parseGithubSignature(`sha256=${Buffer.from(digest).toString('hex')}`)?.equals(Buffer.from(digest))).toBe(true);
      }),
      fuzzParameters(),
    );
  });
});
