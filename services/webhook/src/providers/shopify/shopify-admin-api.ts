import { ProviderError, type ProviderCallContext } from '../provider-adapter.js';
import { isRetryableStatus, jsonBodyOf, providerRequest, retryAfterMs as httpRetryAfterMs } from '../provider-http.js';
import type { ShopifyCredentials } from './shopify-credentials.js';

/**
 * One call of Shopify's Admin GraphQL API and the reading of its answer, following
 * "GraphQL Admin API reference" (https://shopify.dev/docs/api/admin-graphql: `POST
 * https://{shop}.myshopify.com/admin/api/{version}/graphql.json`, the access token in
 * `X-Shopify-Access-Token`) and "Shopify API response status and error codes"
 * (https://shopify.dev/docs/api/usage/response-codes).
 *
 * What counts as Shopify's "no" (not retried) and what as a passing failure (retried by the
 * caller with backoff):
 * - 401 (bad or revoked token), 402 (shop frozen), 403 (missing scope), 404 (no such shop or API
 *   version), 423 (shop locked) and other 4xx: a "no", with Shopify's `errors` text.
 * - 429 and 5xx: retryable, with `Retry-After` when Shopify sends it.
 * - 200 with top-level GraphQL `errors`: a "no" (an invalid topic, a malformed query), except
 *   `THROTTLED` (the query-cost bucket is empty: "Shopify API rate limits",
 *   https://shopify.dev/docs/api/usage/rate-limits) and `INTERNAL_SERVER_ERROR`, which are retried.
 * - Timeouts and network errors: retryable. A URL the outbound guard refuses: a "no" (both as
 *   the machinery's `providerRequest` says).
 */

export interface ShopifyUserError {
  field: string[] | null;
  message: string;
}

const JSON_TYPE = 'application/json';
const USER_AGENT = 'Runline webhook subscriptions';

export async function callShopifyAdminApi(
  credentials: ShopifyCredentials,
  apiVersion: string,
  query: string,
  variables: Record<string, unknown>,
  context: ProviderCallContext,
): Promise<Record<string, unknown>> {
  const response = await providerRequest(context, {
    method: 'POST',
    url: `https://${credentials.storeDomain}/admin/api/${apiVersion}/graphql.json`,
    headers: {
      'content-type': JSON_TYPE,
      accept: JSON_TYPE,
      'user-agent': USER_AGENT,
      'x-shopify-access-token': credentials.accessToken,
    },
    body: JSON.stringify({ query, variables }),
    httpsOnly: true,
  });

  const body = jsonBodyOf(response);
  const { status } = response;
  if (isRetryableStatus(status)) {
    throw new ProviderError(httpMessage(status, body), true, status, shopifyRetryAfterMs(response.headers));
  }
  if (status < 200 || status >= 300) throw new ProviderError(httpMessage(status, body), false, status);
  if (!isObject(body)) throw new ProviderError('Shopify answered with a body that is not JSON', false, status);

  const errors = body.errors;
  if (errors !== undefined && errors !== null && !(Array.isArray(errors) && errors.length === 0)) {
    throw graphqlError(errors, body.extensions, status);
  }
  if (!isObject(body.data)) throw new ProviderError('Shopify answered without data', false, status);
  return body.data;
}

/** The `userErrors` of a mutation payload: a non-empty list is Shopify's "no". */
export function userErrorsOf(payload: unknown): ShopifyUserError[] {
  if (!isObject(payload) || !Array.isArray(payload.userErrors)) return [];
  return payload.userErrors.filter(isObject).map((error) => ({
    field: Array.isArray(error.field) ? error.field.filter((part): part is string => typeof part === 'string') : null,
    message: typeof error.message === 'string' ? error.message : 'Unknown error',
  }));
}

/** Shopify's own messages, as the subscription's failure reason. */
export function userErrorMessage(errors: readonly ShopifyUserError[]): string {
  return errors.map((error) => error.message).join('; ');
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The reason phrases of the response-codes page, for answers whose body says nothing. */
const STATUS_TEXT: Readonly<Record<number, string>> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  402: 'Payment Required (the shop is frozen)',
  403: 'Forbidden (the access token lacks a scope this needs)',
  404: 'Not Found',
  406: 'Not Acceptable',
  423: 'Locked (the shop is locked)',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
};

/** Shopify's answers carry `{"errors": "…"}` (or an object or list of them); that text is the message. */
function httpMessage(status: number, body: unknown): string {
  const said = isObject(body) ? errorsText(body.errors) : '';
  return said !== '' ? said : `Shopify answered ${status} ${STATUS_TEXT[status] ?? ''}`.trim();
}

function errorsText(errors: unknown): string {
  if (typeof errors === 'string') return errors;
  if (Array.isArray(errors)) return errors.map(errorsText).filter((text) => text !== '').join('; ');
  if (isObject(errors)) {
    if (typeof errors.message === 'string') return errors.message;
    return Object.entries(errors)
      .map(([key, value]) => `${key}: ${errorsText(value)}`)
      .join('; ');
  }
  return '';
}

/**
 * Top-level GraphQL errors (`{"errors": [{"message", "extensions": {"code"}}]}`). A throttled
 * answer says how long to wait through the cost extension: the missing points divided by the
 * restore rate (points per second).
 */
function graphqlError(errors: unknown, extensions: unknown, status: number): ProviderError {
  const list = Array.isArray(errors) ? errors.filter(isObject) : [];
  const codes = list.map((error) => (isObject(error.extensions) ? error.extensions.code : undefined));
  const message = list.length > 0 ? list.map(graphqlErrorText).join('; ') : errorsText(errors) || 'Shopify answered with an error';
  if (codes.includes('THROTTLED')) return new ProviderError(message, true, status, throttleWaitMs(extensions));
  if (codes.includes('INTERNAL_SERVER_ERROR')) return new ProviderError(message, true, status);
  return new ProviderError(message, false, status);
}

/** `Variable $topic of type WebhookSubscriptionTopic! was provided invalid value` says more with the value it refused. */
function graphqlErrorText(error: Record<string, unknown>): string {
  const message = typeof error.message === 'string' ? error.message : 'Unknown error';
  const value = isObject(error.extensions) ? error.extensions.value : undefined;
  return typeof value === 'string' && value.length <= 100 ? `${message}: ${value}` : message;
}

function throttleWaitMs(extensions: unknown): number | null {
  const cost = isObject(extensions) && isObject(extensions.cost) ? extensions.cost : undefined;
  const throttle = cost !== undefined && isObject(cost.throttleStatus) ? cost.throttleStatus : undefined;
  const requested = cost?.requestedQueryCost;
  const available = throttle?.currentlyAvailable;
  const rate = throttle?.restoreRate;
  if (typeof requested !== 'number' || typeof available !== 'number' || typeof rate !== 'number' || !(rate > 0)) return null;
  return Math.max(0, Math.ceil(((requested - available) / rate) * 1000));
}

/**
 * `Retry-After` in ms. Shopify writes seconds with a fraction (`Retry-After: 2.0`, "Shopify API
 * rate limits", https://shopify.dev/docs/api/usage/rate-limits), which the generic reader (whole
 * seconds or an HTTP date) does not take; everything else is read as it reads it.
 */
export function shopifyRetryAfterMs(headers: Readonly<Record<string, string>>, now: Date = new Date()): number | null {
  const value = headers['retry-after']?.trim();
  if (value !== undefined && /^[0-9]{1,9}\.[0-9]{1,3}$/.test(value)) return Math.ceil(Number(value) * 1000);
  return httpRetryAfterMs(headers, now);
}
