import type { OutboundResponse } from '@runline/outbound';
import { ProviderError, type CreatedProviderWebhook, type ProviderAdapter, type ProviderCallContext } from '../provider-adapter.js';
import { isRetryableStatus, jsonBodyOf, providerRequest, retryAfterMs } from '../provider-http.js';
import { StripeSignatureScheme } from './stripe-signature.scheme.js';

/** `{secretKey}` (DESIGN section 9). */
export interface StripeCredentials {
  secretKey: string;
}

/**
 * A secret key (`sk_live_…`, `sk_test_…`) or a restricted key (`rk_…`) with write access to
 * webhook endpoints (https://docs.stripe.com/keys#obtain-api-keys). Publishable keys (`pk_`)
 * cannot manage webhooks.
 */
const SECRET_KEY = /^(sk|rk)_(live|test)_[0-9A-Za-z]{8,247}$/;
/**
 * Stripe event names are dotted lower-case words (`charge.succeeded`,
 * `customer.subscription.updated`), or `*` for every event
 * (https://docs.stripe.com/api/webhook_endpoints/create, `enabled_events`). Whether a name exists
 * is Stripe's to say: an unknown one comes back as Stripe's own error (FAILED).
 */
const EVENT_NAME = /^(\*|[a-z0-9_]+(\.[a-z0-9_]+)+)$/;

/**
 * Stripe, through its webhook endpoints API (https://docs.stripe.com/api/webhook_endpoints):
 * - create: `POST /v1/webhook_endpoints`, form-encoded (`url`, `enabled_events[]`), with the
 *   secret key as a Bearer token (https://docs.stripe.com/api/authentication); the answer's
 *   `secret` (`whsec_…`) is "only returned at creation" and signs every delivery;
 * - delete: `DELETE /v1/webhook_endpoints/{id}`; a 404 with code `resource_missing` means the
 *   endpoint is already gone (https://docs.stripe.com/error-codes#resource-missing);
 * - errors: `{error: {type, code, message, param}}` with 4xx for the caller's mistakes, 429 for
 *   too many requests and 5xx for Stripe's own trouble (https://docs.stripe.com/api/errors): the
 *   last two are retried.
 */
export class StripeAdapter implements ProviderAdapter<StripeCredentials> {
  readonly provider = 'stripe' as const;
  readonly scheme = new StripeSignatureScheme();

  parseCredentials(input: unknown): { ok: true; credentials: StripeCredentials } | { ok: false; error: string } {
    const secretKey = input !== null && typeof input === 'object' ? (input as Record<string, unknown>).secretKey : undefined;
    if (typeof secretKey !== 'string' || !SECRET_KEY.test(secretKey)) {
      return { ok: false, error: 'credentials.secretKey must be a Stripe secret key (sk_live_…, sk_test_… or a restricted rk_… key)' };
    }
    return { ok: true, credentials: { secretKey } };
  }

  checkEvents(events: readonly string[]): { ok: true } | { ok: false; error: string } {
    const bad = events.find((event) => !EVENT_NAME.test(event));
    if (bad !== undefined) return { ok: false, error: `"${bad.slice(0, 100)}" is not a Stripe event name (such as charge.succeeded, or * for all)` };
    return { ok: true };
  }

  async create(credentials: StripeCredentials, endpoint: string, events: readonly string[], context: ProviderCallContext): Promise<CreatedProviderWebhook> {
    const form = new URLSearchParams({ url: endpoint });
    for (const event of events) form.append('enabled_events[]', event);
    const response = await providerRequest(context, {
      method: 'POST',
      url: `${apiBase(context)}/v1/webhook_endpoints`,
      headers: { ...authorization(credentials), 'content-type': 'application/x-www-form-urlencoded' },
      body: form.toString(),
    });
    if (response.status < 200 || response.status >= 300) throw stripeError(response);
    const created = jsonBodyOf(response) as { id?: unknown; secret?: unknown } | undefined;
    if (typeof created?.id !== 'string' || typeof created.secret !== 'string' || created.secret === '') {
      throw new ProviderError('Stripe created the endpoint but did not return its id and signing secret', false, response.status);
    }
    return { providerId: created.id, signingSecret: created.secret };
  }

  async remove(credentials: StripeCredentials, providerId: string, context: ProviderCallContext): Promise<'removed' | 'already-gone'> {
    const response = await providerRequest(context, {
      method: 'DELETE',
      url: `${apiBase(context)}/v1/webhook_endpoints/${encodeURIComponent(providerId)}`,
      headers: authorization(credentials),
    });
    if (response.status >= 200 && response.status < 300) return 'removed';
    if (response.status === 404 && stripeErrorOf(response)?.code === 'resource_missing') return 'already-gone';
    throw stripeError(response);
  }

  classify(eventName: string | null, events: readonly string[]): 'run' | 'ignore' {
    if (eventName === null) return 'ignore';
    return events.includes('*') || events.includes(eventName) ? 'run' : 'ignore';
  }
}

function apiBase(context: ProviderCallContext): string {
  if (!context.apiBaseUrl) throw new ProviderError('STRIPE_API_URL is not configured', false);
  return context.apiBaseUrl.replace(/\/+$/, '');
}

function authorization(credentials: StripeCredentials): Record<string, string> {
  return { authorization: `Bearer ${credentials.secretKey}`, accept: 'application/json' };
}

function stripeErrorOf(response: OutboundResponse): { message?: string; code?: string; type?: string } | undefined {
  const body = jsonBodyOf(response) as { error?: unknown } | undefined;
  const error = body?.error;
  if (error === null || typeof error !== 'object') return undefined;
  const { message, code, type } = error as Record<string, unknown>;
  return {
    ...(typeof message === 'string' ? { message } : {}),
    ...(typeof code === 'string' ? { code } : {}),
    ...(typeof type === 'string' ? { type } : {}),
  };
}

/** Stripe's refusal with Stripe's own message; 429 and 5xx are retryable, after Retry-After when sent. */
function stripeError(response: OutboundResponse): ProviderError {
  const message = stripeErrorOf(response)?.message ?? `Stripe answered HTTP ${response.status}`;
  const retryable = isRetryableStatus(response.status);
  return new ProviderError(message, retryable, response.status, retryable ? retryAfterMs(response.headers) : null);
}
