import { createHmac } from 'node:crypto';
import type { IncomingDelivery } from './delivery-scheme.js';
import { RunlineSignatureScheme, runlineSignature } from './runline-signature.scheme.js';

const SECRET = 'hook-secret-0123456789abcdef';
const BODY = '{"orderId":"A-1","amount":12.5}';
const NOW = new Date('2030-01-01T00:00:00.000Z');
const NOW_SECONDS = String(NOW.getTime() / 1000);

function delivery(headers: Record<string, string>, body = BODY): IncomingDelivery {
  return { rawBody: Buffer.from(body, 'utf8'), headers, receivedAt: NOW };
}

/** What a sender computes, written out independently of the code under test. */
function sign(payload: string): string {
  return `sha256=${createHmac('sha256', SECRET).update(payload).digest('hex')}`;
}

describe('RunlineSignatureScheme', () => {
  const scheme = new RunlineSignatureScheme(300);

  it('verifies an HMAC-SHA256 of the raw body without a timestamp', () => {
    expect(scheme.verify(delivery({ 'x-runline-signature': sign(BODY) }), SECRET)).toEqual({ ok: true });
  });

  it('verifies an HMAC of "<timestamp>.<raw body>" with a timestamp within the tolerance', () => {
    const ts = String(Number(NOW_SECONDS) - 299);
    expect(scheme.verify(delivery({ 'x-runline-signature': sign(`${ts}.${BODY}`), 'x-runline-timestamp': ts }), SECRET)).toEqual({ ok: true });
    const ahead = String(Number(NOW_SECONDS) + 300);
    expect(scheme.verify(delivery({ 'x-runline-signature': sign(`${ahead}.${BODY}`), 'x-runline-timestamp': ahead }), SECRET)).toEqual({ ok: true });
  });

  it('refuses a correctly signed timestamp more than 300 s away as stale, in both directions', () => {
    for (const ts of [String(Number(NOW_SECONDS) - 301), String(Number(NOW_SECONDS) + 301)]) {
      expect(scheme.verify(delivery({ 'x-runline-signature': sign(`${ts}.${BODY}`), 'x-runline-timestamp': ts }), SECRET)).toEqual({ ok: false, failure: 'stale-timestamp' });
    }
  });

  it('says "invalid signature", not "stale", when a stale timestamp comes with a wrong signature', () => {
    const ts = String(Number(NOW_SECONDS) - 3600);
    expect(scheme.verify(delivery({ 'x-runline-signature': sign(BODY), 'x-runline-timestamp': ts }), SECRET)).toEqual({ ok: false, failure: 'invalid-signature' });
  });

  it('refuses a body signature sent with a timestamp (the timestamp is part of what is signed)', () => {
    expect(scheme.verify(delivery({ 'x-runline-signature': sign(BODY), 'x-runline-timestamp': NOW_SECONDS }), SECRET)).toEqual({ ok: false, failure: 'invalid-signature' });
  });

  it('refuses a changed body, another secret, and missing or malformed headers', () => {
    const good = sign(BODY);
    const refused = { ok: false, failure: 'invalid-signature' };
    expect(scheme.verify(delivery({ 'x-runline-signature': good }, `${BODY} `), SECRET)).toEqual(refused);
    expect(scheme.verify(delivery({ 'x-runline-signature': good }), `${SECRET}x`)).toEqual(refused);
    for (const header of ['', good.slice(7), good.toUpperCase().replace('SHA256', 'sha256'), `sha1=${good.slice(7)}`, `${good}00`, good.slice(0, -2), 'sha256=', 'sha256=zz']) {
      expect(scheme.verify(delivery({ 'x-runline-signature': header }), SECRET)).toEqual(refused);
    }
    expect(scheme.verify(delivery({}), SECRET)).toEqual(refused);
    for (const ts of ['', 'abc', '-1', '1.5', ' 12x']) {
      expect(scheme.verify(delivery({ 'x-runline-signature': sign(`${ts}.${BODY}`), 'x-runline-timestamp': ts }), SECRET)).toEqual(refused);
    }
  });

  it('signs the way it verifies (the helper the README example mirrors)', () => {
    expect(runlineSignature(SECRET, BODY)).toBe(sign(BODY));
    expect(runlineSignature(SECRET, BODY, NOW_SECONDS)).toBe(sign(`${NOW_SECONDS}.${BODY}`));
  });

  it('reads the delivery id from X-Runline-Delivery, none when absent or blank; no event name', () => {
    expect(scheme.deliveryIdOf(delivery({ 'x-runline-delivery': ' evt-1 ' }))).toBe('evt-1');
    expect(scheme.deliveryIdOf(delivery({ 'x-runline-delivery': '  ' }))).toBeNull();
    expect(scheme.deliveryIdOf(delivery({}))).toBeNull();
    expect(scheme.deliveryIdOf(delivery({ 'x-runline-delivery': 'x'.repeat(500) }))?.length).toBe(200);
    expect(scheme.eventNameOf()).toBeNull();
  });
});
