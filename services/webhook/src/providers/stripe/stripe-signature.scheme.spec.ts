import Stripe from 'stripe';
import type { IncomingDelivery } from '@runline/signatures';
import { parseStripeSignature, StripeSignatureScheme } from './stripe-signature.scheme.js';

const SECRET = 'whsec_test_0123456789abcdefghijklmnop';
const EVENT = { id: 'evt_1PqRsT2eZvKYlo2C', object: 'event', type: 'charge.succeeded', data: { object: { id: 'ch_1', amount: 2000 } } };
const BODY = JSON.stringify(EVENT);
const NOW = new Date('2030-01-01T00:00:00.000Z');
const NOW_SECONDS = NOW.getTime() / 1000;
const stripe = new Stripe('sk_test_signing_only');

/** Stripe's own signer (stripe-node), so the verifier is held against Stripe's implementation. */
const signed = (options: { secret?: string; timestamp?: number; payload?: string } = {}) =>
  stripe.webhooks.generateTestHeaderString({ payload: options.payload ?? BODY, secret: options.secret ?? SECRET, timestamp: options.timestamp ?? NOW_SECONDS });

function delivery(header: string | undefined, body = BODY): IncomingDelivery {
  return { rawBody: Buffer.from(body, 'utf8'), headers: header === undefined ? {} : { 'stripe-signature': header }, receivedAt: NOW };
}

describe('StripeSignatureScheme', () => {
  const scheme = new StripeSignatureScheme();

  it('verifies a delivery stripe-node signed: t=…,v1=<HMAC of "<t>.<raw body>">', () => {
    expect(scheme.verify(delivery(signed()), SECRET)).toEqual({ ok: true });
  });

  it('refuses another secret, a changed body, no header and an empty secret', () => {
    expect(scheme.verify(delivery(signed({ secret: 'whsec_other' })), SECRET)).toEqual({ ok: false, failure: 'invalid-signature' });
    expect(scheme.verify(delivery(signed(), BODY.replace('2000', '2001')), SECRET)).toEqual({ ok: false, failure: 'invalid-signature' });
    expect(scheme.verify(delivery(undefined), SECRET)).toEqual({ ok: false, failure: 'invalid-signature' });
    expect(scheme.verify(delivery(signed({ secret: '' })), '')).toEqual({ ok: false, failure: 'invalid-signature' });
  });

  it('accepts any matching v1 during a secret rotation, in either order', () => {
    const [t, ours] = signed().split(',');
    const old = signed({ secret: 'whsec_previous' }).split(',')[1];
    expect(scheme.verify(delivery(`${t},${old},${ours}`), SECRET)).toEqual({ ok: true });
    expect(scheme.verify(delivery(`${t},${ours},${old}`), SECRET)).toEqual({ ok: true });
    expect(scheme.verify(delivery(`${t},${old}`), SECRET)).toEqual({ ok: false, failure: 'invalid-signature' });
  });

  it('ignores schemes other than v1 (a v0 test signature never verifies)', () => {
    const v0 = stripe.webhooks.generateTestHeaderString({ payload: BODY, secret: SECRET, timestamp: NOW_SECONDS, scheme: 'v0' });
    expect(scheme.verify(delivery(v0), SECRET)).toEqual({ ok: false, failure: 'invalid-signature' });
    const [t, v1] = signed().split(',');
    expect(scheme.verify(delivery(`${t},v0=${'ab'.repeat(32)},${v1},foo=bar`), SECRET)).toEqual({ ok: true });
  });

  it('takes timestamps up to 300 s from the time received, either way; beyond, stale (signed ones only)', () => {
    for (const offset of [-300, 300]) expect(scheme.verify(delivery(signed({ timestamp: NOW_SECONDS + offset })), SECRET)).toEqual({ ok: true });
    for (const offset of [-301, 301]) {
      expect(scheme.verify(delivery(signed({ timestamp: NOW_SECONDS + offset })), SECRET)).toEqual({ ok: false, failure: 'stale-timestamp' });
    }
    // Wrong and stale: not told it is stale.
    expect(scheme.verify(delivery(signed({ timestamp: NOW_SECONDS - 1000, secret: 'whsec_other' })), SECRET)).toEqual({ ok: false, failure: 'invalid-signature' });
  });

  it('refuses a header with two t, a malformed t, or no v1', () => {
    const [t, v1] = signed().split(',');
    for (const header of [`${t},${t},${v1}`, `t=-1,${v1}`, `t=1e9,${v1}`, `${t}`, `${v1}`, `t=${NOW_SECONDS},v1=${'A'.repeat(64)}`, '']) {
      expect({ header, verdict: scheme.verify(delivery(header), SECRET) }).toEqual({ header, verdict: { ok: false, failure: 'invalid-signature' } });
    }
  });

  it('reads the delivery id and event name from the Event in the body (id, type)', () => {
    expect(scheme.deliveryIdOf(delivery(signed()))).toBe('evt_1PqRsT2eZvKYlo2C');
    expect(scheme.eventNameOf(delivery(signed()))).toBe('charge.succeeded');
    for (const body of ['not json', '[]', 'null', '{"id":5,"type":["x"]}', '{}']) {
      expect([body, scheme.deliveryIdOf(delivery(undefined, body)), scheme.eventNameOf(delivery(undefined, body))]).toEqual([body, null, null]);
    }
  });
});

describe('parseStripeSignature', () => {
  it('splits t and every v1 as 32-byte digests', () => {
    const parsed = parseStripeSignature(`t=1700000000,v1=${'0a'.repeat(32)},v0=zz,v1=${'ff'.repeat(32)}`);
    expect(parsed?.timestamp).toBe('1700000000');
    expect(parsed?.signatures.map((digest) => digest.toString('hex'))).toEqual(['0a'.repeat(32), 'ff'.repeat(32)]);
  });

  it('bounds the work: a header over 4 KiB or with more than 8 v1 is not Stripe’s', () => {
    expect(parseStripeSignature(`t=1,v1=${'0a'.repeat(32)},x=${'y'.repeat(5000)}`)).toBeNull();
    expect(parseStripeSignature(`t=1${`,v1=${'0a'.repeat(32)}`.repeat(9)}`)).toBeNull();
    expect(parseStripeSignature(`t=1${`,v1=${'0a'.repeat(32)}`.repeat(8)}`)?.signatures).toHaveLength(8);
  });
});
