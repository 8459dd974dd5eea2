import { OutboundError, type OutboundRequest, type OutboundResponse } from '@runline/outbound';
import { ProviderError, type ProviderCallContext } from './provider-adapter.js';

/** Longest provider answer read; webhook APIs answer a few KiB. */
const MAX_PROVIDER_RESPONSE_BYTES = 256 * 1024;

/**
 * One call to a provider's API for an adapter: through the outbound guard, within the context's
 * time limit. A request that never got an answer (timeout, network, a refused address) becomes
 * a ProviderError: retryable unless the guard refused the address, which no retry changes.
 * Whatever status the provider answered is returned for the adapter to read in its own terms.
 */
export async function providerRequest(context: ProviderCallContext, request: Omit<OutboundRequest, 'timeoutMs' | 'maxResponseBytes'>): Promise<OutboundResponse> {
  try {
    return await context.outbound.request({ ...request, timeoutMs: context.timeoutMs, maxResponseBytes: MAX_PROVIDER_RESPONSE_BYTES });
  } catch (error) {
    if (error instanceof OutboundError) {
      throw new ProviderError(`Could not reach the provider: ${error.message}`, error.code !== 'REFUSED');
    }
    throw error;
  }
}

/** True for the answers a provider wants retried later: 429 and 5xx. */
export function isRetryableStatus(status: number): boolean {
  return status === 429 || status >= 500;
}

/**
 * `Retry-After` in ms (RFC 9110 section 10.2.3: delay-seconds or an HTTP date), or null when
 * absent or unreadable.
 */
export function retryAfterMs(headers: Readonly<Record<string, string>>, now: Date = new Date()): number | null {
  const value = headers['retry-after']?.trim();
  if (!value) return null;
  if (/^[0-9]{1,9}$/.test(value)) return Number(value) * 1000;
  // IMF-fixdate only (`Sun, 06 Nov 1994 08:49:37 GMT`): Date.parse reads "1.5" or "-1" as dates too.
  if (!/^[A-Z][a-z]{2}, [0-9]{2} [A-Z][a-z]{2} [0-9]{4} [0-9]{2}:[0-9]{2}:[0-9]{2} GMT$/.test(value)) return null;
  const at = Date.parse(value);
  if (Number.isNaN(at)) return null;
  return Math.max(0, at - now.getTime());
}

/** The body as JSON, or undefined when it is not JSON. */
export function jsonBodyOf(response: OutboundResponse): unknown {
  try {
    return JSON.parse(response.body.toString('utf8')) as unknown;
  } catch {
    return undefined;
  }
}
