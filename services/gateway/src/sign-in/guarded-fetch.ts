import type { OutboundGuard } from '@runline/outbound';
import type { CustomFetch } from 'openid-client';

/** Bodies never carry a payload with these statuses; the Response constructor refuses one. */
const NULL_BODY_STATUSES = new Set([101, 103, 204, 205, 304]);

/**
 * openid-client's `[customFetch]` on the outbound guard: discovery, token and JWKS requests to
 * the provider are vetted like every other outbound request (no private addresses unless
 * allowed, no redirects followed, time and size capped).
 */
export function guardedFetch(guard: OutboundGuard): CustomFetch {
  return async (url, options) => {
    const response = await guard.request({
      method: options.method,
      url,
      headers: options.headers,
      body: await bodyOf(options.body),
      signal: options.signal,
      httpsOnly: true,
    });
    const headers = new Headers();
    for (const [name, value] of Object.entries(response.headers)) headers.append(name, value);
    const body = NULL_BODY_STATUSES.has(response.status) ? null : new Uint8Array(response.body);
    return new Response(body, { status: response.status, headers });
  };
}

async function bodyOf(body: Parameters<CustomFetch>[1]['body']): Promise<string | Uint8Array | undefined> {
  if (body === undefined || body === null) return undefined;
  if (typeof body === 'string') return body;
  if (body instanceof URLSearchParams) return body.toString();
  if (body instanceof Uint8Array) return body;
  if (body instanceof ArrayBuffer) return new Uint8Array(body);
  // A stream: openid-client does not send one for the calls made here, but read it whole if so.
  return new Uint8Array(await new Response(body).arrayBuffer());
}
