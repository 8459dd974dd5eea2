import { createHmac } from 'node:crypto';
import type { HttpClient, HttpResult } from '@runline/testing';
import type { ProjectFixture } from '../gateway-fixtures.js';

export interface CreatedHook {
  id: string;
  name: string;
  url: string;
  secret: string;
  status: string;
  createdAt: string;
  rateLimitPerMinute: number;
}

/** Creates an inbound hook through the console as the project's owner. */
export async function createHook(http: HttpClient, project: ProjectFixture, body: Record<string, unknown> = { name: 'orders' }): Promise<CreatedHook> {
  const created = await http.post<CreatedHook>(`/v1/orgs/${project.orgId}/projects/${project.projectId}/webhooks`, body, { bearer: project.ownerJwt });
  if (created.status !== 201) throw new Error(`hook: ${created.status} ${JSON.stringify(created.body)}`);
  return created.body;
}

/**
 * The X-Runline-Signature a sender computes (README "Inbound webhooks"), written out here on its
 * own so the tests do not sign with the code they test.
 */
export function signDelivery(secret: string, rawBody: string, timestamp?: string): string {
  const signed = timestamp === undefined ? rawBody : `${timestamp}.${rawBody}`;
  return `sha256=${createHmac('sha256', secret).update(signed, 'utf8').digest('hex')}`;
}

export interface DeliveryOptions {
  /** Unix seconds; signed into the HMAC. */
  timestamp?: string;
  deliveryId?: string;
  /** Sent instead of the right signature; null sends none. */
  signature?: string | null;
  method?: string;
  contentType?: string;
}

export type HookAnswer = Record<string, unknown> & { invocationId?: string; status?: string; error?: string; reasons?: string[] };

/** Sends `rawBody` (text as is, or an object as JSON) to the hook's public URL, signed with `secret`. */
export function deliver(http: HttpClient, hookId: string, secret: string, body: string | object, options: DeliveryOptions = {}): Promise<HttpResult<HookAnswer>> {
  const rawBody = typeof body === 'string' ? body : JSON.stringify(body);
  const headers: Record<string, string> = { 'content-type': options.contentType ?? 'application/json' };
  const signature = options.signature === undefined ? signDelivery(secret, rawBody, options.timestamp) : options.signature;
  if (signature !== null) headers['x-runline-signature'] = signature;
  if (options.timestamp !== undefined) headers['x-runline-timestamp'] = options.timestamp;
  if (options.deliveryId !== undefined) headers['x-runline-delivery'] = options.deliveryId;
  const method = options.method ?? 'POST';
  // fetch sends no body with GET or HEAD.
  const withBody = method !== 'GET' && method !== 'HEAD';
  return http.request<HookAnswer>(method, `/v1/hooks/${hookId}`, withBody ? { rawBody, headers } : { headers });
}

export const nowSeconds = (offsetSeconds = 0) => String(Math.floor(Date.now() / 1000) + offsetSeconds);
