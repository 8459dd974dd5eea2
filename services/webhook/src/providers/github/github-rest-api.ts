import type { OutboundResponse } from '@runline/outbound';
import { ProviderError, type ProviderCallContext } from '../provider-adapter.js';
import { jsonBodyOf, providerRequest, retryAfterMs } from '../provider-http.js';

/** api.github.com unless configured (`GITHUB_API_URL`, e.g. `https://HOSTNAME/api/v3` for GitHub Enterprise Server). */
export const DEFAULT_GITHUB_API_URL = 'https://api.github.com';

/**
 * The headers GitHub asks every REST call to carry ("Getting started with the REST API",
 * https://docs.github.com/en/rest/using-the-rest-api/getting-started-with-the-rest-api): the
 * recommended media type, the API version this adapter was written against ("API Versions",
 * https://docs.github.com/en/rest/about-the-rest-api/api-versions), a User-Agent (requests
 * without one are refused: "Troubleshooting the REST API", User agent required) and the token
 * as a Bearer credential.
 */
export const GITHUB_API_VERSION = '2022-11-28';
export const GITHUB_MEDIA_TYPE = 'application/vnd.github+json';
export const GITHUB_USER_AGENT = 'Runline-Webhook-Subscriptions';

/** What the wait is when GitHub says a secondary rate limit was hit but not for how long ("Rate limits for the REST API": "wait for at least one minute"). */
const SECONDARY_RATE_LIMIT_WAIT_MS = 60_000;

export interface GithubCall {
  method: 'POST' | 'DELETE';
  /** The path below the API base, already encoded. */
  path: string;
  token: string;
  body?: unknown;
}

/**
 * One call of GitHub's REST API through the outbound guard. Answers in 2xx, and those in
 * `accept` (404 when a hook is already gone), are returned; anything else throws a ProviderError
 * with GitHub's own message ("Troubleshooting the REST API",
 * https://docs.github.com/en/rest/using-the-rest-api/troubleshooting-the-rest-api):
 * - `{message, documentation_url}` is GitHub's error shape; 422 adds `errors`
 *   (`{resource, field, code, message?}`), whose details are appended to the message.
 * - 401 (Bad credentials), 404 (no such repository, or a token that may not see it), 422 and
 *   other 4xx: GitHub's "no", not retried.
 * - 429, and 403 when it is a rate limit (`x-ratelimit-remaining: 0`, a `retry-after`, or a
 *   message saying so): retryable, with the wait GitHub asks for ("Rate limits for the REST
 *   API", Exceeding the rate limit, https://docs.github.com/en/rest/using-the-rest-api/rate-limits-for-the-rest-api).
 *   Any other 403 (say "Resource not accessible by personal access token") is a "no".
 * - 5xx: retryable. Timeouts, network errors and a URL the outbound guard refuses: as
 *   `providerRequest` says (retryable but the refusal).
 */
export async function callGithubApi(call: GithubCall, context: ProviderCallContext, accept: readonly number[] = []): Promise<OutboundResponse> {
  const base = (context.apiBaseUrl ?? DEFAULT_GITHUB_API_URL).replace(/\/+$/, '');
  const headers: Record<string, string> = {
    accept: GITHUB_MEDIA_TYPE,
    authorization: `Bearer ${call.token}`,
    'x-github-api-version': GITHUB_API_VERSION,
    'user-agent': GITHUB_USER_AGENT,
  };
  if (call.body !== undefined) headers['content-type'] = 'application/json';

  const response = await providerRequest(context, {
    method: call.method,
    url: `${base}${call.path}`,
    headers,
    ...(call.body !== undefined ? { body: JSON.stringify(call.body) } : {}),
    httpsOnly: true,
  });

  const { status } = response;
  if ((status >= 200 && status < 300) || accept.includes(status)) return response;
  throw githubError(response);
}

/** The ProviderError for a GitHub answer that is not a success. */
export function githubError(response: OutboundResponse, now = Date.now()): ProviderError {
  const { status, headers } = response;
  const body = jsonBodyOf(response);
  const message = errorMessage(status, body);
  if (status === 429 || (status === 403 && isRateLimit(headers, message))) {
    return new ProviderError(message, true, status, rateLimitWaitMs(headers, now));
  }
  if (status >= 500) return new ProviderError(message, true, status, retryAfterMs(headers, new Date(now)));
  return new ProviderError(message, false, status);
}

function isRateLimit(headers: Record<string, string>, message: string): boolean {
  return headers['x-ratelimit-remaining']?.trim() === '0' || headers['retry-after'] !== undefined || /rate limit/i.test(message);
}

/** `retry-after` seconds first; else, with no requests left, until `x-ratelimit-reset` (UTC epoch seconds); else a minute. */
function rateLimitWaitMs(headers: Record<string, string>, now: number): number {
  const after = retryAfterMs(headers, new Date(now));
  if (after !== null) return after;
  const reset = headers['x-ratelimit-reset']?.trim();
  if (headers['x-ratelimit-remaining']?.trim() === '0' && reset !== undefined && /^\d{1,12}$/.test(reset)) {
    return Math.max(0, Number(reset) * 1000 - now);
  }
  return SECONDARY_RATE_LIMIT_WAIT_MS;
}

/** GitHub's `message`, with a 422's `errors` after it: "Validation Failed: Hook already exists on this repository". */
function errorMessage(status: number, body: unknown): string {
  const said = isObject(body) && typeof body.message === 'string' && body.message.trim() !== '' ? body.message.trim() : `GitHub answered ${status}`;
  const details = isObject(body) && Array.isArray(body.errors) ? body.errors.map(validationErrorText).filter((text) => text !== '') : [];
  return details.length > 0 ? `${said}: ${details.join('; ')}` : said;
}

/** One entry of a 422's `errors`: its `message` for `custom` errors, else resource, field and code ("Validation Failed" table). */
function validationErrorText(error: unknown): string {
  if (typeof error === 'string') return error;
  if (!isObject(error)) return '';
  if (typeof error.message === 'string' && error.message !== '') return error.message;
  return [error.resource, error.field, error.code].filter((part): part is string => typeof part === 'string' && part !== '').join(' ');
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
