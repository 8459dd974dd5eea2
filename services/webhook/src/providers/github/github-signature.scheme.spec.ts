import { createHmac } from 'node:crypto';
import { sign } from '@octokit/webhooks-methods';
import type { IncomingDelivery } from '@runline/signatures';
import { GithubSignatureScheme, parseGithubSignature } from './github-signature.scheme.js';

const SECRET = 'a-github-hook-secret-0123456789';
const BODY = '{"ref":"refs/heads/main","after":"6113728f27ae82c7b1a177c8d03f9e96e0adf246","commits":[{"message":"Füge ✓ hinzu"}]}';
const refused = { ok: false, failure: 'invalid-signature' };

function delivery(headers: Record<string, string>, body: string | Uint8Array = BODY): IncomingDelivery {
  return { rawBody: typeof body === 'string' ? Buffer.from(body, 'utf8') : body, headers, receivedAt: new Date() };
}

describe('GithubSignatureScheme', () => {
  const scheme = new GithubSignatureScheme();

  it('verifies X-Hub-Signature-256 as GitHub signs it (@octokit/webhooks-methods sign), unicode body included', async () => {
    expect(scheme.verify(delivery({ 'x-hub-signature-256': await sign(SECRET, BODY) }), SECRET)).toEqual({ ok: true });
  });

  it('matches the test values of GitHub’s "Validating webhook deliveries" page', () => {
    const header = 'sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17';
    expect(scheme.verify(delivery({ 'x-hub-signature-256': header }, 'Hello, World!'), "It's a Secret to Everybody")).toEqual({ ok: true });
    expect(scheme.verify(delivery({ 'x-hub-signature-256': header }, 'Hello, World?'), "It's a Secret to Everybody")).toEqual(refused);
  });

  it('refuses a changed body, another secret, a missing header, and only the legacy SHA-1 header', async () => {
    const good = await sign(SECRET, BODY);
    expect(scheme.verify(delivery({ 'x-hub-signature-256': good }, `${BODY} `), SECRET)).toEqual(refused);
    expect(scheme.verify(delivery({ 'x-hub-signature-256': good }), `${SECRET}x`)).toEqual(refused);
    // No secret, no signature: a hook stored without one never verifies, even an HMAC keyed with ''.
    expect(scheme.verify(delivery({ 'x-hub-signature-256': `sha256=${createHmac('sha256', '').update(BODY).digest('hex')}` }), '')).toEqual(refused);
    expect(scheme.verify(delivery({}), SECRET)).toEqual(refused);
    expect(scheme.verify(delivery({ 'x-hub-signature': 'sha1=7d38cdd689735b008b3c702edd92eea23791c5f6' }), SECRET)).toEqual(refused);
  });

  it('refuses malformed signature values', async () => {
    const good = await sign(SECRET, BODY);
    const hex = good.slice('sha256='.length);
    for (const header of ['', hex, `sha1=${hex}`, `SHA256=${hex}`, `sha256=${hex.toUpperCase()}`, `sha256:${hex}`, `${good}00`, good.slice(0, -2), 'sha256=', `sha256=${'z'.repeat(64)}`, `${good},${good}`, `sha256= ${hex}`]) {
      expect(scheme.verify(delivery({ 'x-hub-signature-256': header }), SECRET)).toEqual(refused);
    }
  });

  it('parses only `sha256=` and 64 hex digits, to 32 bytes', () => {
    expect(parseGithubSignature(`sha256=${'ab'.repeat(32)}`)).toEqual(Buffer.alloc(32, 0xab));
    for (const value of [undefined, null, 42, `sha256=${'AB'.repeat(32)}`, `sha256=${'ab'.repeat(31)}`, `sha256=${'ab'.repeat(33)}`]) expect(parseGithubSignature(value)).toBeNull();
  });

  it('reads the delivery id from X-GitHub-Delivery and the event from X-GitHub-Event', () => {
    const headers = { 'x-github-delivery': ' 72d3162e-cc78-11e3-81ab-4c9367dc0958 ', 'x-github-event': 'pull_request' };
    expect(scheme.deliveryIdOf(delivery(headers))).toBe('72d3162e-cc78-11e3-81ab-4c9367dc0958');
    expect(scheme.eventNameOf(delivery(headers))).toBe('pull_request');
    expect(scheme.deliveryIdOf(delivery({ 'x-github-delivery': ' ' }))).toBeNull();
    expect(scheme.deliveryIdOf(delivery({}))).toBeNull();
    expect(scheme.deliveryIdOf(delivery({ 'x-github-delivery': 'x'.repeat(500) }))?.length).toBe(200);
    for (const event of ['', 'Push', 'push; rm', '*', 'x'.repeat(101)]) expect(scheme.eventNameOf(delivery({ 'x-github-event': event }))).toBeNull();
    expect(scheme.eventNameOf(delivery({}))).toBeNull();
  });
});
