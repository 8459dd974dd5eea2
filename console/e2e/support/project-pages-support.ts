import { createHmac } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { HttpClient, HttpResult } from '@runline/testing';
import type { ConsoleProject } from './console-fixtures.js';

/** An automation whose only step fails; two attempts a second apart, then a FLOW dead letter. */
export const FAILING_AUTOMATION = {
  schemaVersion: 1,
  workflow: {
    trigger: { externalEnabled: true, key: 'external_event', expectedPayload: { orderId: '' }, retry: { maxAttempts: 2, backoffSeconds: 1 } },
    start: 'boom',
    nodes: { boom: { type: 'fail', error: 'Order service is down' } },
  },
};

/** The same automation once fixed: it returns the order id. */
export const FIXED_AUTOMATION = {
  schemaVersion: 1,
  workflow: {
    trigger: { externalEnabled: true, key: 'external_event', expectedPayload: { orderId: '' }, retry: { maxAttempts: 2, backoffSeconds: 1 } },
    start: 'done',
    nodes: { done: { type: 'return', value: "{ 'orderId': payload.orderId }" } },
  },
};

/** Saves and publishes a new definition as the owner. */
export async function publish(http: HttpClient, project: ConsoleProject, definition: object): Promise<void> {
  const base = `/v1/orgs/${project.orgId}/projects/${project.projectId}`;
  const saved = await http.put(`${base}/definition`, { definition }, { bearer: project.ownerJwt });
  const published = await http.post(`${base}/publish`, {}, { bearer: project.ownerJwt });
  if (saved.status !== 200 || published.status !== 200) throw new Error(`publish: ${saved.status} ${published.status} ${JSON.stringify(published.body)}`);
}

/**
 * A signed delivery to an inbound hook, as a sender computes it (README "Inbound webhooks"):
 * `X-Runline-Signature: sha256=<hex HMAC-SHA256 of the raw body>`. Written out here so the
 * test does not sign with the code it tests.
 */
export function deliverToHook(http: HttpClient, hookUrl: string, secret: string, body: object): Promise<HttpResult<{ invocationId?: string; error?: string }>> {
  const rawBody = JSON.stringify(body);
  const signature = `sha256=${createHmac('sha256', secret).update(rawBody, 'utf8').digest('hex')}`;
  return http.request('POST', new URL(hookUrl).pathname, { rawBody, headers: { 'content-type': 'application/json', 'x-runline-signature': signature } });
}

/** Polls `check` until it answers something, or fails with `what` after `timeoutMs`. */
export async function eventually<T>(what: string, check: () => Promise<T | undefined>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = await check();
    if (found !== undefined) return found;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** A local API the polling trigger asks: answers the same items on every GET and counts the calls. */
export class ItemsEndpoint {
  calls = 0;
  private constructor(
    private readonly server: Server,
    readonly url: string,
  ) {}

  static async start(items: object[]): Promise<ItemsEndpoint> {
    const holder: { endpoint?: ItemsEndpoint } = {};
    const server = createServer((_request, response) => {
      if (holder.endpoint) holder.endpoint.calls += 1;
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify(items));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    holder.endpoint = new ItemsEndpoint(server, `http://127.0.0.1:${(server.address() as AddressInfo).port}/items`);
    return holder.endpoint;
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}
