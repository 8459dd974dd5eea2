import { createHmac } from 'node:crypto';

/**
 * The two signatures a callback carries when it has a secret.
 *
 * - `X-Service-Signature` (the spec's): lowercase hex HMAC-SHA256 of the exact body bytes,
 *   keyed with the secret's UTF-8 bytes. No prefix, no timestamp.
 * - Standard Webhooks (`webhook-id`, `webhook-timestamp`, `webhook-signature`), for receivers
 *   that want replay protection: `v1,` + base64 HMAC-SHA256 of `${id}.${timestamp}.${body}`.
 *   The key is the same secret's UTF-8 bytes (Standard Webhooks libraries take it as
 *   `whsec_` + base64 of those bytes), so one secret verifies both.
 */
export function serviceSignature(secret: string, body: Uint8Array): string {
  return createHmac('sha256', secret).update(body).digest('hex');
}

export function standardWebhookSignature(secret: string, id: string, timestampSeconds: number, body: Uint8Array): string {
  const mac = createHmac('sha256', secret).update(`${id}.${timestampSeconds}.`).update(body).digest('base64');
  return `v1,${mac}`;
}

/** The headers of one attempt. `webhook-id` and the body stay the same across attempts; the timestamp does not. */
export function callbackHeaders(
  delivery: { id: string; body: Uint8Array },
  secret: string | null,
  now: Date,
): Record<string, string> {
  const timestamp = Math.floor(now.getTime() / 1000);
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'user-agent': 'Runline-Callback/1',
    'webhook-id': delivery.id,
    'webhook-timestamp': String(timestamp),
  };
  if (secret !== null && secret !== '') {
    headers['x-service-signature'] = serviceSignature(secret, delivery.body);
    headers['webhook-signature'] = standardWebhookSignature(secret, delivery.id, timestamp, delivery.body);
  }
  return headers;
}
