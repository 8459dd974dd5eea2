import { createHmac, randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:https';
import type { IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { TestCertificate } from '../https-receiver.js';

/**
 * A local stand-in for one Shopify shop's Admin GraphQL API and its webhook deliveries, over real
 * HTTPS on 127.0.0.1 (the caller's self-signed certificate). It follows Shopify's documentation:
 *
 * - `POST /admin/api/{version}/graphql.json` with `X-Shopify-Access-Token`
 *   (https://shopify.dev/docs/api/admin-graphql); a missing or wrong token answers 401
 *   `{"errors":"[API] Invalid API key or access token (unrecognized login or wrong password)"}`,
 *   another path 404 `{"errors":"Not Found"}` ("Shopify API response status and error codes",
 *   https://shopify.dev/docs/api/usage/response-codes).
 * - `webhookSubscriptionCreate(topic, webhookSubscription: {uri | callbackUrl, format})`: an
 *   unknown topic is a GraphQL variable error (the topic is an enum, so Shopify refuses it before
 *   the mutation runs); an empty, malformed, non-HTTPS or internal address and a second
 *   subscription of one topic to one address are `userErrors` with Shopify's messages.
 * - `webhookSubscriptionDelete(id)`: an unknown id answers the userError "Webhook subscription
 *   does not exist" with a null `deletedWebhookSubscriptionId`.
 * - Scripted answers for the next requests (`answerNext`): throttling (HTTP 200 with a
 *   `THROTTLED` error and the cost extension, https://shopify.dev/docs/api/usage/rate-limits),
 *   429 with `Retry-After`, 402 frozen, 423 locked, 403, 5xx.
 * - Deliveries as Shopify sends them ("Webhooks delivery structure", section Headers,
 *   https://shopify.dev/docs/apps/build/webhooks/delivery-structure): a JSON POST with
 *   `X-Shopify-Topic`, `X-Shopify-Hmac-Sha256`, `X-Shopify-Shop-Domain`, `X-Shopify-API-Version`,
 *   `X-Shopify-Webhook-Id`, `X-Shopify-Event-Id` and `X-Shopify-Triggered-At`, signed with the
 *   app's client secret.
 *
 * The userError messages are the ones Shopify gives; the bodies of 402, 403, 423 and 5xx answers
 * are representative (the docs give the statuses, not their texts).
 */

export interface ShopifyFakeOptions {
  certificate: Pick<TestCertificate, 'key' | 'cert'>;
  /** The Admin API access token the shop accepts. */
  accessToken: string;
  /** The app's client secret: deliveries are signed with it. */
  apiSecret: string;
  /** What deliveries say in `X-Shopify-Shop-Domain`. */
  shopDomain?: string;
  /**
   * Accept `http://127.0.0.1:<port>` addresses. Shopify itself takes only HTTPS addresses of
   * public hosts; the test system's gateway speaks plain HTTP on loopback, so the e2e tests
   * allow exactly that and nothing else.
   */
  allowLoopbackHttpCallbacks?: boolean;
}

/** A request the fake received, with its GraphQL document and variables when it had them. */
export interface ShopifyFakeRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  raw: string;
  /** When it arrived (epoch ms). */
  at: number;
  query?: string;
  variables?: Record<string, unknown>;
}

export interface ShopifyFakeSubscription {
  id: string;
  /** The enum value (`ORDERS_CREATE`). */
  topic: string;
  uri: string;
  format: string;
  createdAt: string;
}

/** A scripted answer: status, JSON (or text) body, headers, and how long to wait before answering. */
export interface ShopifyFakeAnswer {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
  delayMs?: number;
}

export interface ShopifyDeliveryOptions {
  /** The topic as deliveries name it (`orders/create`). */
  topic: string;
  payload: unknown;
  /** Where to send it; by default the address of this shop's subscription to `topic`. */
  to?: string;
  webhookId?: string;
  /** Sign with this secret instead of the app's. */
  signWith?: string;
  /** Send this `X-Shopify-Hmac-Sha256` instead of the signature. */
  hmac?: string;
}

export interface ShopifyDeliveryResult {
  status: number;
  body: unknown;
  webhookId: string;
}

export interface ShopifyFake {
  /** `127.0.0.1:<port>`, what the credentials' `storeDomain` names. */
  storeDomain: string;
  requests: ShopifyFakeRequest[];
  /** GraphQL requests with the mutation they called. */
  mutations(name: 'webhookSubscriptionCreate' | 'webhookSubscriptionDelete'): ShopifyFakeRequest[];
  subscriptions(): ShopifyFakeSubscription[];
  /** Deletes a subscription behind the app's back, as a merchant uninstalling the app would. */
  forget(id: string): void;
  /** Answers the next requests with these, in order, instead of serving them. */
  answerNext(...answers: ShopifyFakeAnswer[]): void;
  /** Sends a delivery the way Shopify does; answers what the receiver said. */
  deliver(options: ShopifyDeliveryOptions): Promise<ShopifyDeliveryResult>;
  close(): Promise<void>;
}

/** The base64 HMAC-SHA256 of the raw body with the app's client secret, as https://shopify.dev/docs/apps/build/webhooks/verify-deliveries describes (and Shopify's own library tests sign: shopify-app-js, lib/webhooks/__tests__/utils.ts). */
export function shopifyHmac(secret: string, body: string | Buffer): string {
  return createHmac('sha256', secret).update(body).digest('base64');
}

/** Scripted answers Shopify gives. */
export const shopifyAnswers = {
  /** The query-cost bucket is empty: HTTP 200, a THROTTLED error, and the cost extension (10 points missing, 100 restored a second: wait 100 ms). */
  throttled: (): ShopifyFakeAnswer => ({
    status: 200,
    body: {
      errors: [{ message: 'Throttled', extensions: { code: 'THROTTLED', documentation: 'https://shopify.dev/api/usage/rate-limits' } }],
      extensions: { cost: { requestedQueryCost: 10, actualQueryCost: null, throttleStatus: { maximumAvailable: 2000, currentlyAvailable: 0, restoreRate: 100 } } },
    },
  }),
  tooManyRequests: (retryAfterSeconds = 2): ShopifyFakeAnswer => ({
    status: 429,
    headers: { 'retry-after': retryAfterSeconds.toFixed(1) },
    body: { errors: 'Exceeded 2 calls per second for api client. Reduce request rates to resume uninterrupted service.' },
  }),
  frozen: (): ShopifyFakeAnswer => ({ status: 402, body: { errors: 'Unavailable Shop' } }),
  forbidden: (): ShopifyFakeAnswer => ({ status: 403, body: { errors: 'This action requires merchant approval for write_webhooks scope.' } }),
  locked: (): ShopifyFakeAnswer => ({ status: 423, body: { errors: 'This shop is locked' } }),
  internalError: (): ShopifyFakeAnswer => ({ status: 500, body: { errors: 'Internal Server Error' } }),
  unavailable: (retryAfterSeconds?: number): ShopifyFakeAnswer => ({
    status: 503,
    headers: { 'content-type': 'text/html', ...(retryAfterSeconds === undefined ? {} : { 'retry-after': String(retryAfterSeconds) }) },
    body: '<html><body><h1>Service Unavailable</h1></body></html>',
  }),
};

/** Delivery topics (`orders/create`) this shop knows; their enum values are the accepted `topic` values. */
const KNOWN_TOPICS = [
  'app/uninstalled', 'carts/create', 'carts/update', 'checkouts/create', 'checkouts/update', 'collections/create',
  'collections/update', 'customers/create', 'customers/update', 'customers/delete', 'customer.tags_added',
  'draft_orders/create', 'fulfillments/create', 'fulfillments/update', 'fulfillment_orders/order_routing_complete',
  'inventory_levels/update', 'orders/cancelled', 'orders/create', 'orders/delete', 'orders/edited', 'orders/fulfilled',
  'orders/paid', 'orders/partially_fulfilled', 'orders/updated', 'products/create', 'products/delete', 'products/update',
  'refunds/create', 'shop/update', 'themes/publish',
];
const TOPICS = new Map(KNOWN_TOPICS.map((topic) => [topic.toUpperCase().replace(/[/.]/g, '_'), topic]));
const INVALID_TOKEN = '[API] Invalid API key or access token (unrecognized login or wrong password)';
const GRAPHQL_PATH = /^\/admin\/api\/(\d{4}-\d{2}|unstable)\/graphql\.json$/;

export async function startShopifyFake(options: ShopifyFakeOptions): Promise<ShopifyFake> {
  const requests: ShopifyFakeRequest[] = [];
  const scripted: ShopifyFakeAnswer[] = [];
  const subscriptions = new Map<string, ShopifyFakeSubscription>();
  const shopDomain = options.shopDomain ?? 'runline-test.myshopify.com';
  let nextId = 1_000_000_001;
  let apiVersion = '2026-10';
  const timers = new Set<NodeJS.Timeout>();

  const serve = (request: ShopifyFakeRequest): ShopifyFakeAnswer => {
    const next = scripted.shift();
    if (next !== undefined) return next;
    const path = GRAPHQL_PATH.exec(request.path);
    if (request.method !== 'POST' || path === null) return { status: 404, body: { errors: 'Not Found' } };
    if (request.headers['x-shopify-access-token'] !== options.accessToken) return { status: 401, body: { errors: INVALID_TOKEN } };
    apiVersion = path[1]!;
    if (!String(request.headers['content-type'] ?? '').startsWith('application/json') || request.query === undefined) {
      return { status: 400, body: { errors: { query: 'Required parameter missing or invalid' } } };
    }
    return { status: 200, body: execute(request.query, request.variables ?? {}) };
  };

  /** Just enough GraphQL for the two mutations: which root field, and its arguments through variables. */
  const execute = (query: string, variables: Record<string, unknown>): unknown => {
    const root = /^\s*mutation\b[\s\S]*?\b(webhookSubscriptionCreate|webhookSubscriptionDelete)\s*\(([^)]*)\)/.exec(query);
    if (root === null) return { errors: [{ message: 'The Shopify fake serves webhookSubscriptionCreate and webhookSubscriptionDelete mutations only' }] };
    const argument = (name: string): unknown => {
      const variable = new RegExp(`\\b${name}\\s*:\\s*\\$(\\w+)`).exec(root[2]!);
      return variable === null ? undefined : variables[variable[1]!];
    };
    return root[1] === 'webhookSubscriptionCreate' ? create(argument('topic'), argument('webhookSubscription')) : remove(argument('id'));
  };

  const create = (topic: unknown, input: unknown): unknown => {
    if (typeof topic !== 'string' || !TOPICS.has(topic)) {
      return {
        errors: [{
          message: 'Variable $topic of type WebhookSubscriptionTopic! was provided invalid value',
          extensions: { value: topic ?? null, problems: [{ path: [], explanation: `Expected "${String(topic)}" to be one of: ${[...TOPICS.keys()].join(', ')}` }] },
        }],
      };
    }
    const fields = typeof input === 'object' && input !== null ? (input as Record<string, unknown>) : {};
    const uri = typeof fields.uri === 'string' ? fields.uri.trim() : typeof fields.callbackUrl === 'string' ? fields.callbackUrl.trim() : '';
    const format = typeof fields.format === 'string' ? fields.format : 'JSON';
    const addressError = checkAddress(uri, options.allowLoopbackHttpCallbacks ?? false);
    const duplicate = [...subscriptions.values()].some((s) => s.topic === topic && s.uri === uri);
    const error = addressError ?? (duplicate ? 'Address for this topic has already been taken' : undefined);
    if (error !== undefined) {
      return { data: { webhookSubscriptionCreate: { webhookSubscription: null, userErrors: [{ field: ['webhookSubscription', 'callbackUrl'], message: error }] } } };
    }
    const subscription = { id: `gid://shopify/WebhookSubscription/${nextId++}`, topic, uri, format, createdAt: new Date().toISOString() };
    subscriptions.set(subscription.id, subscription);
    return { data: { webhookSubscriptionCreate: { webhookSubscription: subscription, userErrors: [] } } };
  };

  const remove = (id: unknown): unknown => {
    if (typeof id !== 'string' || !subscriptions.delete(id)) {
      return { data: { webhookSubscriptionDelete: { deletedWebhookSubscriptionId: null, userErrors: [{ field: ['id'], message: 'Webhook subscription does not exist' }] } } };
    }
    return { data: { webhookSubscriptionDelete: { deletedWebhookSubscriptionId: id, userErrors: [] } } };
  };

  const server: Server = createServer({ key: options.certificate.key, cert: options.certificate.cert }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      const request: ShopifyFakeRequest = { method: req.method ?? '', path: req.url ?? '/', headers: req.headers, raw, at: Date.now(), ...graphqlOf(raw) };
      requests.push(request);
      const answer = serve(request);
      const text = typeof answer.body === 'string' ? answer.body : JSON.stringify(answer.body);
      const send = () => {
        if (!res.destroyed) res.writeHead(answer.status, { 'content-type': 'application/json; charset=utf-8', ...answer.headers }).end(text);
      };
      if (answer.delayMs === undefined) send();
      else timers.add(setTimeout(send, answer.delayMs));
    });
  });
  server.on('tlsClientError', () => undefined);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    storeDomain: `127.0.0.1:${port}`,
    requests,
    mutations: (name) => requests.filter((request) => request.query !== undefined && new RegExp(`\\b${name}\\s*\\(`).test(request.query)),
    subscriptions: () => [...subscriptions.values()],
    forget: (id) => void subscriptions.delete(id),
    answerNext: (...answers) => void scripted.push(...answers),
    async deliver(delivery) {
      const to = delivery.to ?? [...subscriptions.values()].find((s) => TOPICS.get(s.topic) === delivery.topic)?.uri;
      if (to === undefined) throw new Error(`The Shopify fake has no subscription to ${delivery.topic}`);
      const body = JSON.stringify(delivery.payload);
      const webhookId = delivery.webhookId ?? randomUUID();
      const response = await fetch(to, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'user-agent': 'Shopify-Captain-Hook',
          'x-shopify-topic': delivery.topic,
          'x-shopify-hmac-sha256': delivery.hmac ?? shopifyHmac(delivery.signWith ?? options.apiSecret, body),
          'x-shopify-shop-domain': shopDomain,
          'x-shopify-api-version': apiVersion,
          'x-shopify-webhook-id': webhookId,
          'x-shopify-event-id': randomUUID(),
          'x-shopify-triggered-at': new Date().toISOString(),
        },
        body,
      });
      const text = await response.text();
      let parsed: unknown = text;
      try {
        parsed = JSON.parse(text);
      } catch {
        // Not JSON: keep the text.
      }
      return { status: response.status, body: parsed, webhookId };
    },
    async close() {
      for (const timer of timers) clearTimeout(timer);
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function graphqlOf(raw: string): { query?: string; variables?: Record<string, unknown> } {
  try {
    const body = JSON.parse(raw) as { query?: unknown; variables?: unknown };
    if (typeof body.query !== 'string') return {};
    const variables = typeof body.variables === 'object' && body.variables !== null ? (body.variables as Record<string, unknown>) : {};
    return { query: body.query, variables };
  } catch {
    return {};
  }
}

/** Shopify's checks of a subscription address, with its messages. */
function checkAddress(uri: string, allowLoopbackHttp: boolean): string | undefined {
  if (uri === '') return "Address can't be blank";
  if (uri.length > 4096) return 'Address is too long';
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return 'Address is not a valid URL';
  }
  if (/\s/.test(uri) || url.hostname === '') return 'Address is not a valid URL';
  const loopbackHttp = allowLoopbackHttp && url.protocol === 'http:' && url.hostname === '127.0.0.1';
  if (url.protocol !== 'https:' && !loopbackHttp) return `Address protocol ${url.protocol}// is not supported`;
  const host = url.hostname.toLowerCase();
  const internal =
    host === 'localhost' ||
    ['shopify.com', 'myshopify.com'].some((domain) => host === domain || host.endsWith(`.${domain}`)) ||
    /^(?:0|10|127)\.|^192\.168\.|^172\.(?:1[6-9]|2\d|3[01])\./.test(host);
  if (internal && !loopbackHttp) return 'Address cannot be a Shopify or an internal domain';
  return undefined;
}
