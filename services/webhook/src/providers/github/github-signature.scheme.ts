import { createHmac, timingSafeEqual } from 'node:crypto';
import type { DeliveryScheme, IncomingDelivery, Verification } from '@runline/signatures';

export const GITHUB_SIGNATURE_HEADER = 'x-hub-signature-256';
export const GITHUB_DELIVERY_HEADER = 'x-github-delivery';
export const GITHUB_EVENT_HEADER = 'x-github-event';

/**
 * `sha256=` and exactly 64 lowercase hex digits, as GitHub sends them ("HMAC hex digest") and as
 * GitHub's own verifier (`@octokit/webhooks-methods` `verify`) takes them: nothing else matches.
 */
const SIGNATURE = /^sha256=([0-9a-f]{64})$/;
/** GitHub's event names are lowercase words joined by `_`. */
const EVENT_NAME = /^[a-z][a-z0-9_]{0,99}$/;
/** A delivery id is a GUID; longer values are cut, the id is a dedupe key, not data. */
const MAX_DELIVERY_ID_LENGTH = 200;

/**
 * GitHub's delivery signature ("Validating webhook deliveries",
 * https://docs.github.com/en/webhooks/using-webhooks/validating-webhook-deliveries):
 * `X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the raw body, keyed with the hook secret>`.
 * No timestamp: GitHub signs the body only, so a replay is caught by the delivery id
 * (`X-GitHub-Delivery`, a GUID per delivery; "Webhook events and payloads", Delivery headers,
 * https://docs.github.com/en/webhooks/webhook-events-and-payloads#delivery-headers), and the
 * event name comes from `X-GitHub-Event`. The legacy SHA-1 `X-Hub-Signature` is never accepted.
 *
 * The compare is constant time: the header is only used once it parses as exactly 32 bytes,
 * which are compared with our 32-byte digest by timingSafeEqual.
 */
export class GithubSignatureScheme implements DeliveryScheme {
  verify(delivery: IncomingDelivery, secret: string): Verification {
    const given = parseGithubSignature(delivery.headers[GITHUB_SIGNATURE_HEADER]);
    if (given === null || secret.length === 0) return { ok: false, failure: 'invalid-signature' };
    const expected = createHmac('sha256', secret).update(delivery.rawBody).digest();
    return timingSafeEqual(expected, given) ? { ok: true } : { ok: false, failure: 'invalid-signature' };
  }

  deliveryIdOf(delivery: IncomingDelivery): string | null {
    const id = delivery.headers[GITHUB_DELIVERY_HEADER]?.trim();
    return id ? id.slice(0, MAX_DELIVERY_ID_LENGTH) : null;
  }

  eventNameOf(delivery: IncomingDelivery): string | null {
    const name = delivery.headers[GITHUB_EVENT_HEADER]?.trim();
    return name !== undefined && EVENT_NAME.test(name) ? name : null;
  }
}

/** The 32 bytes of an `X-Hub-Signature-256` value, or null when it is anything else. Never throws. */
export function parseGithubSignature(header: unknown): Buffer | null {
  if (typeof header !== 'string') return null;
  // Not trimmed: HTTP parsing already took the whitespace around a header value off, and GitHub's verifier takes the value as is.
  const match = SIGNATURE.exec(header);
  return match ? Buffer.from(match[1]!, 'hex') : null;
}
