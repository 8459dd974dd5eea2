import { randomUUID } from 'node:crypto';
import { deliveryKeyOf } from './delivery-key.js';
import type { IncomingDelivery } from './delivery-scheme.js';
import { verifyInboundHookDelivery } from './inbound-hook-verdict.js';
import { RunlineSignatureScheme, runlineSignature } from './runline-signature.scheme.js';

const SECRET = 'hook-secret-0123456789abcdef';
const BODY = '{"orderId":"A-1"}';
const NOW = new Date('2030-01-01T00:00:00.000Z');
const scheme = new RunlineSignatureScheme(300);

function delivery(headers: Record<string, string>): IncomingDelivery {
  return { rawBody: Buffer.from(BODY, 'utf8'), headers, receivedAt: NOW };
}

describe('verifyInboundHookDelivery', () => {
  const hook = { id: randomUUID(), active: true };
  const signed = { 'x-runline-signature': runlineSignature(SECRET, BODY) };

  it('refuses a revoked hook whatever the signature, without opening its secret', () => {
    const opened: string[] = [];
    const open = () => {
      opened.push('opened');
      return SECRET;
    };
    expect(verifyInboundHookDelivery({ ...hook, active: false }, open, delivery(signed), scheme)).toEqual({ verdict: 'revoked' });
    expect(verifyInboundHookDelivery({ ...hook, active: false }, open, delivery({}), scheme)).toEqual({ verdict: 'revoked' });
    expect(opened).toEqual([]);
  });

  it('says what the scheme says of a signature that does not verify', () => {
    expect(verifyInboundHookDelivery(hook, () => 'another-secret-0123456789', delivery(signed), scheme)).toEqual({ verdict: 'invalid-signature' });
    const stale = String(NOW.getTime() / 1000 - 301);
    const staleHeaders = { 'x-runline-signature': runlineSignature(SECRET, BODY, stale), 'x-runline-timestamp': stale };
    expect(verifyInboundHookDelivery(hook, () => SECRET, delivery(staleHeaders), scheme)).toEqual({ verdict: 'stale-timestamp' });
  });

  it('verifies a signed delivery, with the run key of its delivery id, or none without one', () => {
    expect(verifyInboundHookDelivery(hook, () => SECRET, delivery(signed), scheme)).toEqual({ verdict: 'verified', deliveryKey: '' });
    expect(verifyInboundHookDelivery(hook, () => SECRET, delivery({ ...signed, 'x-runline-delivery': 'evt-1' }), scheme)).toEqual({
      verdict: 'verified',
      deliveryKey: deliveryKeyOf(hook.id, 'evt-1'),
    });
  });
});
