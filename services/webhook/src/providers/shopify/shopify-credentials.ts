/** What a Shopify subscription needs (DESIGN section 9): the shop, an Admin API access token, and the app's client secret that signs deliveries. */
export interface ShopifyCredentials {
  /** The shop's host, as `your-store.myshopify.com`; the Admin API lives there. */
  storeDomain: string;
  /** An Admin API access token with the scopes the subscribed topics need (`read_orders` for `orders/create`). */
  accessToken: string;
  /** The app's client secret (API secret key): Shopify signs every delivery with it. */
  apiSecret: string;
}

/** One DNS label: letters, digits and inner hyphens, at most 63 characters. */
const LABEL = '[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?';
/**
 * A host name of two labels or more, or an IPv4 literal, with an optional port. No scheme, path,
 * user info or IPv6 brackets: the value is put into `https://{storeDomain}/admin/api/…`, so
 * anything that could change the URL's meaning is refused here.
 */
const STORE_DOMAIN = new RegExp(`^(?:${LABEL}\\.)+${LABEL}(?::(\\d{1,5}))?$`);
const MAX_FIELD_LENGTH = 1000;

/**
 * Reads `{storeDomain, accessToken, apiSecret}`. `storeDomain` is a host name, in practice the
 * shop's `*.myshopify.com` domain (Shopify's own library accepts only its domains; we also take
 * a shop's plain custom host name). A `host:port` form is accepted too: the local Shopify fake
 * the tests run against listens on `127.0.0.1:<port>`. That is no way around anything: what keeps
 * the call off private networks is the outbound guard, which refuses loopback and private
 * addresses whatever the syntax, unless `OUTBOUND_ALLOWED_CIDRS` allows them (tests only).
 */
export function parseShopifyCredentials(input: unknown): { ok: true; credentials: ShopifyCredentials } | { ok: false; error: string } {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    return { ok: false, error: 'credentials must be an object {storeDomain, accessToken, apiSecret}' };
  }
  const fields = input as Record<string, unknown>;
  for (const name of ['storeDomain', 'accessToken', 'apiSecret'] as const) {
    const value = fields[name];
    if (typeof value !== 'string' || value.trim() === '') return { ok: false, error: `credentials.${name} is required` };
    if (value.length > MAX_FIELD_LENGTH) return { ok: false, error: `credentials.${name} is too long` };
  }
  const storeDomain = (fields.storeDomain as string).trim().toLowerCase().replace(/\.$/, '');
  const match = STORE_DOMAIN.exec(storeDomain);
  const port = match?.[1] === undefined ? undefined : Number(match[1]);
  if (match === null || (port !== undefined && (port < 1 || port > 65535))) {
    return { ok: false, error: 'credentials.storeDomain must be the shop\'s domain, such as your-store.myshopify.com' };
  }
  return {
    ok: true,
    credentials: { storeDomain, accessToken: (fields.accessToken as string).trim(), apiSecret: fields.apiSecret as string },
  };
}
