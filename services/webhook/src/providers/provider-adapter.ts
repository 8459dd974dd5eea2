import type { OutboundGuard } from '@runline/outbound';
import type { DeliveryScheme } from '@runline/signatures';

/** The providers whose webhooks Runline creates and removes itself (DESIGN section 9). */
export type ProviderName = 'stripe' | 'shopify' | 'github';

/** What a provider call needs besides the credentials: the guarded HTTP client and the provider's API base. */
export interface ProviderCallContext {
  /** Every provider call goes through the outbound guard (DESIGN section 6). */
  outbound: OutboundGuard;
  /**
   * The provider's API base URL from configuration (`STRIPE_API_URL`, `GITHUB_API_URL`); null
   * for Shopify, whose API lives at the shop's own `storeDomain`.
   */
  apiBaseUrl: string | null;
  /**
   * The API version from configuration, for a provider that versions its API in the path
   * (Shopify: `SHOPIFY_API_VERSION`, as `/admin/api/{version}/graphql.json`); the adapter's own
   * default when absent.
   */
  apiVersion?: string;
  /** Time limit of one provider call, in ms. */
  timeoutMs: number;
}

/** The webhook as the provider made it. */
export interface CreatedProviderWebhook {
  /** The provider's id of the webhook (Stripe `we_…`, a Shopify GID, a GitHub hook id). */
  providerId: string;
  /** The secret deliveries are signed with (Stripe's `whsec_…` returned only at creation, the Shopify app's API secret, the GitHub hook secret we chose). */
  signingSecret: string;
}

/**
 * A provider's refusal, with the provider's own message (saved as the subscription's
 * `failureReason`). `retryable` is true for 429 and 5xx answers and for timeouts and network
 * errors, which the caller retries with backoff (waiting `retryAfterMs` when the provider said
 * how long); false for the provider's "no" (bad credentials, unknown event, a validation error).
 */
export class ProviderError extends Error {
  constructor(
    message: string,
    readonly retryable: boolean,
    readonly status: number | null = null,
    /** How long the provider asked us to wait before trying again (its `Retry-After`), in ms. */
    readonly retryAfterMs: number | null = null,
  ) {
    super(message);
    this.name = 'ProviderError';
  }
}

/**
 * One provider behind one small interface: check the credentials and events a user gave, create
 * and delete the webhook through the provider's own public API, and verify and name the
 * deliveries it sends (its `scheme`). Adapters hold no state; the subscription machinery seals
 * credentials and secrets, retries retryable errors and records outcomes.
 */
export interface ProviderAdapter<Credentials = unknown> {
  readonly provider: ProviderName;
  /** The credentials as given (`{secretKey}`, `{storeDomain, accessToken, apiSecret}`, `{token, repository, webhookSecret?}`), or a message saying what is wrong. */
  parseCredentials(input: unknown): { ok: true; credentials: Credentials } | { ok: false; error: string };
  /** The event names as given (comma-separated in the request, already split and trimmed), or a message naming a bad one. */
  checkEvents(events: readonly string[]): { ok: true } | { ok: false; error: string };
  /** Creates the webhook at the provider, pointing at `endpoint`. Throws ProviderError. */
  create(credentials: Credentials, endpoint: string, events: readonly string[], context: ProviderCallContext): Promise<CreatedProviderWebhook>;
  /** Removes it; resolves 'already-gone' when the provider says it no longer exists. Throws ProviderError. */
  remove(credentials: Credentials, providerId: string, context: ProviderCallContext): Promise<'removed' | 'already-gone'>;
  /** How its deliveries are signed, identified and named. */
  readonly scheme: DeliveryScheme;
  /**
   * Whether a verified delivery is one of the subscribed `events` (its event name as the
   * scheme reads it, mapped back to the names the user subscribed with), or a provider's own
   * housekeeping (GitHub's `ping`) that starts no run.
   */
  classify(eventName: string | null, events: readonly string[]): 'run' | 'ignore';
}
