import { createHmac, timingSafeEqual as realTimingSafeEqual } from 'node:crypto';
import * as nodeCrypto from 'node:crypto';
import { jest } from '@jest/globals';
import fc from 'fast-check';
import { fuzzParameters } from '@runline/testing';
import type { IncomingDelivery, Verification } from './delivery-scheme.js';

/**
 * Every compare the scheme makes, as the two lengths it compared. `node:crypto` is the real one;
 * only timingSafeEqual is wrapped, to watch what the scheme hands it (the call itself is the real
 * constant-time compare).
 */
const compares: Array<[number, number]> = [];
jest.unstable_mockModule('node:crypto', () => ({
  ...nodeCrypto,
  timingSafeEqual: (a: NodeJS.ArrayBufferView, b: NodeJS.ArrayBufferView) => {
    compares.push([a.byteLength, b.byteLength]);
    return realTimingSafeEqual(a, b);
  },
}));
const { RunlineSignatureScheme } = await import('./runline-signature.scheme.js');

const TOLERANCE = 300;
const NOW = new Date('2030-01-01T00:00:00.000Z');
const NOW_SECONDS = NOW.getTime() / 1000;
const scheme = new RunlineSignatureScheme(TOLERANCE);
/** 500 runs per property, a fixed seed unless FUZZ_SEED says otherwise (libs/testing fuzz-parameters.ts). */
const RUNS = fuzzParameters(500);

/** A sender's signature, written out independently of the code under test. */
function sign(secret: string, body: Uint8Array, timestamp?: string): string {
  const hmac = createHmac('sha256', secret);
  if (timestamp !== undefined) hmac.update(`${timestamp}.`);
  return `sha256=${hmac.update(body).digest('hex')}`;
}

function delivery(body: Uint8Array, headers: Record<string, string>): IncomingDelivery {
  return { rawBody: body, headers, receivedAt: NOW };
}

/** Verifies, and says how many compares it made: never throws, or the property fails. */
function verify(body: Uint8Array, headers: Record<string, string>, secret: string): { result: Verification; compares: Array<[number, number]> } {
  const before = compares.length;
  const result = scheme.verify(delivery(body, headers), secret);
  return { result, compares: compares.slice(before) };
}

const HEX = '0123456789abcdef';
const secretArb = fc.string({ minLength: 1, maxLength: 64, unit: 'grapheme' });
const bodyArb = fc.uint8Array({ maxLength: 512 });
/** Within the tolerance, so only the signature decides. */
const freshTimestampArb = fc.integer({ min: NOW_SECONDS - TOLERANCE, max: NOW_SECONDS + TOLERANCE }).map(String);
const hexArb = (length: fc.IntegerConstraints) =>
  fc.array(fc.constantFrom(...HEX), { minLength: length.min, maxLength: length.max }).map((chars) => chars.join(''));

/** Values a signature header may hold that are almost, or not at all, ours. */
const malformedSignatureArb = fc.oneof(
  fc.string({ maxLength: 100, unit: 'binary' }),
  // The right prefix, a wrong number of hex digits.
  hexArb({ min: 0, max: 130 }).filter((hex) => hex.length !== 64).map((hex) => `sha256=${hex}`),
  // (Whitespace around the value is trimmed, so only non-blank additions make it malformed.)
  // 64 digits, with a wrong prefix, upper case, a non-hex digit, or something around them.
  fc
    .tuple(
      fc.constantFrom('', 'sha256', 'SHA256=', 'sha1=', 'sha512=', 'sha256:', 'v1,', 'sha256 =', 'sha256=='),
      hexArb({ min: 64, max: 64 }),
    )
    .map(([prefix, hex]) => `${prefix}${hex}`),
  fc.tuple(hexArb({ min: 64, max: 64 }), fc.integer({ min: 0, max: 63 }), fc.constantFrom('A', 'F', 'g', 'z', ' ', '-', 'é', '０'))
    .map(([hex, index, char]) => `sha256=${hex.slice(0, index)}${char}${hex.slice(index + 1)}`),
  fc.tuple(hexArb({ min: 64, max: 64 }), fc.constantFrom(',', ' x', '\n0', 'x', '00', ',sha256=00'))
    .map(([hex, tail]) => `sha256=${hex}${tail}`),
  fc.tuple(hexArb({ min: 64, max: 64 }), hexArb({ min: 64, max: 64 })).map(([a, b]) => `sha256=${a},sha256=${b}`),
);

/** Values a timestamp header may hold that are not plain Unix seconds. */
const malformedTimestampArb = fc.oneof(
  fc.string({ maxLength: 30, unit: 'binary' }).filter((text) => !/^[0-9]{1,12}$/.test(text.trim())),
  fc.constantFrom('', ' ', '-1', '+1893456000', '1893456000.5', '1.8934560e9', '0x70d9c100', '1893456000x', '١٨٩٣٤٥٦٠٠٠', '1_893_456_000', 'Infinity', 'NaN', '9999999999999'),
);

describe('RunlineSignatureScheme under fuzzing (fast-check)', () => {
  it('random headers and bodies: never throws, never verifies', () => {
    fc.assert(
      fc.property(
        secretArb,
        bodyArb,
        fc.dictionary(
          fc.oneof(fc.constantFrom('x-runline-signature', 'x-runline-timestamp', 'x-runline-delivery'), fc.string({ maxLength: 20 })),
          fc.string({ maxLength: 120, unit: 'binary' }),
        ),
        (secret, body, headers) => {
          expect(verify(body, headers, secret).result.ok).toBe(false);
        },
      ),
      RUNS,
    );
  });

  it('malformed X-Runline-Signature or X-Runline-Timestamp: refused as invalid before any compare, whatever the rest', () => {
    fc.assert(
      fc.property(
        secretArb,
        bodyArb,
        fc.oneof(
          // A malformed signature, with or without a good timestamp.
          fc.record({ signature: malformedSignatureArb, timestamp: fc.option(freshTimestampArb, { nil: undefined }) }),
          // A signature that is right for the body (and this "timestamp"), with a malformed timestamp.
          fc.record({ signature: fc.constant(undefined), timestamp: malformedTimestampArb }),
        ),
        (secret, body, { signature, timestamp }) => {
          const headers: Record<string, string> = { 'x-runline-signature': signature ?? sign(secret, body, timestamp) };
          if (timestamp !== undefined) headers['x-runline-timestamp'] = timestamp;
          const { result, compares: made } = verify(body, headers, secret);
          expect(result).toEqual({ ok: false, failure: 'invalid-signature' });
          expect(made).toEqual([]);
        },
      ),
      RUNS,
    );
  });

  it('a valid signature verifies; any single change to a body byte, a digest character or the timestamp does not', () => {
    const changeArb = fc.oneof(
      fc.record({ kind: fc.constant('flip-byte' as const), at: fc.nat(), xor: fc.integer({ min: 1, max: 255 }) }),
      fc.record({ kind: fc.constant('insert-byte' as const), at: fc.nat(), byte: fc.integer({ min: 0, max: 255 }) }),
      fc.record({ kind: fc.constant('delete-byte' as const), at: fc.nat() }),
      fc.record({ kind: fc.constant('digest-char' as const), at: fc.integer({ min: 0, max: 63 }), step: fc.integer({ min: 1, max: 15 }) }),
      fc.record({ kind: fc.constant('timestamp' as const), delta: fc.integer({ min: -TOLERANCE, max: TOLERANCE }).filter((delta) => delta !== 0) }),
      fc.record({ kind: fc.constant('timestamp-leading-zero' as const) }),
      fc.record({ kind: fc.constant('timestamp-dropped' as const) }),
      fc.record({ kind: fc.constant('timestamp-added' as const), at: freshTimestampArb }),
    );
    fc.assert(
      fc.property(secretArb, bodyArb, fc.option(freshTimestampArb, { nil: undefined }), changeArb, (secret, body, timestamp, change) => {
        const headers: Record<string, string> = { 'x-runline-signature': sign(secret, body, timestamp) };
        if (timestamp !== undefined) headers['x-runline-timestamp'] = timestamp;
        const valid = verify(body, headers, secret);
        expect(valid.result).toEqual({ ok: true });
        expect(valid.compares).toEqual([[32, 32]]);

        let changedBody = body;
        const changed = { ...headers };
        switch (change.kind) {
          case 'flip-byte':
          case 'delete-byte':
            fc.pre(body.length > 0);
            changedBody = Uint8Array.from(body);
            if (change.kind === 'flip-byte') changedBody[change.at % body.length]! ^= change.xor;
            else changedBody = Uint8Array.from([...body.slice(0, change.at % body.length), ...body.slice((change.at % body.length) + 1)]);
            break;
          case 'insert-byte': {
            const at = change.at % (body.length + 1);
            changedBody = Uint8Array.from([...body.slice(0, at), change.byte, ...body.slice(at)]);
            break;
          }
          case 'digest-char': {
            const digest = headers['x-runline-signature']!.slice('sha256='.length);
            const other = HEX[(HEX.indexOf(digest[change.at]!) + change.step) % 16]!;
            changed['x-runline-signature'] = `sha256=${digest.slice(0, change.at)}${other}${digest.slice(change.at + 1)}`;
            break;
          }
          case 'timestamp':
            fc.pre(timestamp !== undefined);
            changed['x-runline-timestamp'] = String(Number(timestamp) + change.delta);
            break;
          case 'timestamp-leading-zero':
            fc.pre(timestamp !== undefined);
            changed['x-runline-timestamp'] = `0${timestamp}`;
            break;
          case 'timestamp-dropped':
            fc.pre(timestamp !== undefined);
            delete changed['x-runline-timestamp'];
            break;
          case 'timestamp-added':
            fc.pre(timestamp === undefined);
            changed['x-runline-timestamp'] = change.at;
            break;
        }
        const refused = verify(changedBody, changed, secret);
        expect(refused.result).toEqual({ ok: false, failure: 'invalid-signature' });
        // Well formed but wrong: the verdict is the constant-time compare's, of two 32-byte digests.
        expect(refused.compares).toEqual([[32, 32]]);
      }),
      RUNS,
    );
  });

  it('compares in constant time: any well-formed digest is parsed to exactly 32 bytes and compared once with timingSafeEqual', () => {
    fc.assert(
      fc.property(secretArb, bodyArb, hexArb({ min: 64, max: 64 }), fc.option(freshTimestampArb, { nil: undefined }), (secret, body, hex, timestamp) => {
        const headers: Record<string, string> = { 'x-runline-signature': ` sha256=${hex} ` };
        if (timestamp !== undefined) headers['x-runline-timestamp'] = timestamp;
        const { result, compares: made } = verify(body, headers, secret);
        expect(made).toEqual([[32, 32]]);
        expect(result.ok).toBe(`sha256=${hex}` === sign(secret, body, timestamp));
      }),
      RUNS,
    );
  });
});
