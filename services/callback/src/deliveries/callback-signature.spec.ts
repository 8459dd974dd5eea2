import { createHmac, timingSafeEqual } from 'node:crypto';
import { callbackHeaders, serviceSignature, standardWebhookSignature } from './callback-signature.js';

const body = Buffer.from('{"invocationId":"i-1","status":"SUCCEEDED","result":{"ok":true},"trace":null}');

describe('callback signatures', () => {
  it('X-Service-Signature is the lowercase hex HMAC-SHA256 of the raw bytes', () => {
    expect(serviceSignature('s3cret', body)).toBe(createHmac('sha256', 's3cret').update(body).digest('hex'));
    expect(serviceSignature('s3cret', body)).toMatch(/^[0-9a-f]{64}$/);
    // A byte changed, whitespace included, changes it.
    expect(serviceSignature('s3cret', Buffer.from(body.toString().replace(':', ': ')))).not.toBe(serviceSignature('s3cret', body));
  });

  it('webhook-signature follows Standard Webhooks: v1,base64(HMAC(id.timestamp.body))', () => {
    const expected = createHmac('sha256', Buffer.from('s3cret')).update(`msg_1.1700000000.${body.toString()}`).digest('base64');
    expect(standardWebhookSignature('s3cret', 'msg_1', 1700000000, body)).toBe(`v1,${expected}`);
  });

  it('sends both schemes with a secret, and no signature without one', () => {
    const now = new Date('2026-01-01T00:00:00.900Z');
    const signed = callbackHeaders({ id: 'd-1', body }, 's3cret', now);
    expect(signed).toEqual({
      'content-type': 'application/json',
      'user-agent': 'Runline-Callback/1',
      'webhook-id': 'd-1',
      'webhook-timestamp': '1767225600',
      'x-service-signature': serviceSignature('s3cret', body),
      'webhook-signature': standardWebhookSignature('s3cret', 'd-1', 1767225600, body),
    });
    const verified = timingSafeEqual(Buffer.from(signed['x-service-signature']!), Buffer.from(createHmac('sha256', 's3cret').update(body).digest('hex')));
    expect(verified).toBe(true);
    const unsigned = callbackHeaders({ id: 'd-1', body }, null, now);
    expect(unsigned['x-service-signature']).toBeUndefined();
    expect(unsigned['webhook-signature']).toBeUndefined();
    expect(unsigned['webhook-id']).toBe('d-1');
  });
});
