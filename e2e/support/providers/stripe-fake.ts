import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:https';
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import Stripe from 'stripe';
import type { TestCertificate } from '../https-receiver.js';

/**
 * A local Stripe for the tests: an HTTPS server that answers the webhook endpoints API as Stripe
 * documents it (https://docs.stripe.com/api/webhook_endpoints/create and /delete, errors as in
 * https://docs.stripe.com/api/errors) and sends deliveries signed the way Stripe does, with
 * stripe-node's own `webhooks.generateTestHeaderString`, so our verifier is held against Stripe's
 * implementation rather than our reading of the docs.
 */

/** Event names this fake knows; anything else is refused as Stripe refuses an unknown enum value. */
const KNOWN_EVENTS = new Set([
  '*',
  'charge.succeeded',
  'charge.failed',
  'charge.refunded',
  'customer.created',
  'customer.subscription.updated',
  'checkout.session.completed',
  'invoice.paid',
  'payment_intent.succeeded',
  'payment_intent.payment_failed',
]);

/** The request, as Stripe would have received it. */
export interface StripeRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  raw: string;
  /** Date.now() when it arrived. */
  at: number;
}

export interface StripeEndpoint {
  id: string;
  url: string;
  enabledEvents: string[];
  secret: string;
  apiKey: string;
}

/** A failure the next matching request gets instead of its normal answer. */
export interface InjectedFailure {
  status: 429 | 500 | 503;
  retryAfterSeconds?: number;
}

export interface StripeDelivery {
  status: number;
  body: Record<string, unknown>;
  eventId: string;
  raw: string;
}

export interface StripeFake {
  /** `https://127.0.0.1:<port>`: STRIPE_API_URL. */
  url: string;
  requests: StripeRequest[];
  endpoints: Map<string, StripeEndpoint>;
  /** API keys the fake accepts (`sk_test_…`); others get Stripe's 401. */
  acceptKey(key: string): void;
  /** The next `count` requests answer `failure` (429 rate limit or a 5xx). */
  failNext(failure: InjectedFailure, count?: number): void;
  /** Deletes an endpoint behind our back, as someone in Stripe's dashboard would. */
  forget(id: string): void;
  /** Sends a signed event to an endpoint's url, as Stripe delivers it (an endpoint object: one deleted since). */
  send(endpoint: string | StripeEndpoint, type: string, options?: SendOptions): Promise<StripeDelivery>;
  close(): Promise<void>;
}

export interface SendOptions {
  /** Unix seconds put into `t=` (and signed); now by default. */
  timestamp?: number;
  /** Sign with this secret instead of the endpoint's. */
  secret?: string;
  /** Also sign with this older secret, as Stripe does while a rolled secret is still valid: two v1. */
  rotatedFrom?: string;
  /** The Event id (`evt_…`); a new one by default. */
  eventId?: string;
  /** Sent instead of the signed header. */
  signatureHeader?: string;
}

/** Stripe's error answer shape: `{error: {type, code?, message, param?, doc_url?}}`. */
function stripeError(res: ServerResponse, status: number, error: Record<string, string>, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', 'request-id': `req_${randomBytes(7).toString('hex')}`, ...headers });
  res.end(JSON.stringify({ error }));
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json', 'request-id': `req_${randomBytes(7).toString('hex')}` });
  res.end(JSON.stringify(body));
}

const stripeId = (prefix: string) => `${prefix}_${randomBytes(12).toString('base64url').replace(/[-_]/g, 'x')}`;

/** Stripe shows an invalid key masked: its prefix and last four characters. */
function masked(key: string): string {
  const prefix = /^(sk|rk|pk)_(test|live)_/.exec(key)?.[0] ?? '';
  return `${prefix}${'*'.repeat(Math.max(0, key.length - prefix.length - 4))}${key.slice(-4)}`;
}

export async function startStripeFake(certificate: Pick<TestCertificate, 'key' | 'cert'>): Promise<StripeFake> {
  const requests: StripeRequest[] = [];
  const endpoints = new Map<string, StripeEndpoint>();
  const keys = new Set<string>();
  const failures: InjectedFailure[] = [];
  const stripe = new Stripe('sk_test_signing_only');

  const handle = (req: IncomingMessage, raw: string, res: ServerResponse) => {
    const path = req.url ?? '/';
    requests.push({ method: req.method ?? '', path, headers: req.headers, raw, at: Date.now() });
    const failure = failures.shift();
    if (failure?.status === 429) {
      // https://docs.stripe.com/rate-limits: 429 with code rate_limit.
      return stripeError(
        res,
        429,
        { type: 'invalid_request_error', code: 'rate_limit', message: 'Too many requests hit the API too quickly. We recommend an exponential backoff of your requests.' },
        failure.retryAfterSeconds === undefined ? {} : { 'retry-after': String(failure.retryAfterSeconds) },
      );
    }
    if (failure) return stripeError(res, failure.status, { type: 'api_error', message: 'An unknown error occurred' });

    // https://docs.stripe.com/api/authentication: Bearer secret key.
    const authorization = req.headers.authorization ?? '';
    const key = /^Bearer (.+)$/.exec(authorization)?.[1];
    if (!key) {
      return stripeError(res, 401, {
        type: 'invalid_request_error',
        message: 'You did not provide an API key. You need to provide your API key in the Authorization header, using Bearer auth (e.g. \'Authorization: Bearer YOUR_SECRET_KEY\').',
      });
    }
    if (!keys.has(key)) return stripeError(res, 401, { type: 'invalid_request_error', message: `Invalid API Key provided: ${masked(key)}` });

    if (req.method === 'POST' && path === '/v1/webhook_endpoints') {
      if (!(req.headers['content-type'] ?? '').startsWith('application/x-www-form-urlencoded')) {
        return stripeError(res, 400, { type: 'invalid_request_error', message: 'Invalid request: the body must be application/x-www-form-urlencoded.' });
      }
      const form = new URLSearchParams(raw);
      const url = form.get('url');
      const enabledEvents = form.getAll('enabled_events[]');
      if (!url) return stripeError(res, 400, { type: 'invalid_request_error', code: 'parameter_missing', param: 'url', message: 'Missing required param: url.' });
      if (enabledEvents.length === 0) {
        return stripeError(res, 400, { type: 'invalid_request_error', code: 'parameter_missing', param: 'enabled_events', message: 'Missing required param: enabled_events.' });
      }
      const unknown = enabledEvents.findIndex((event) => !KNOWN_EVENTS.has(event));
      if (unknown >= 0) {
        return stripeError(res, 400, {
          type: 'invalid_request_error',
          param: `enabled_events[${unknown}]`,
          message: `Invalid enabled_events[${unknown}]: must be one of ${[...KNOWN_EVENTS].join(', ')}`,
        });
      }
      const endpoint: StripeEndpoint = { id: stripeId('we'), url, enabledEvents, secret: `whsec_${randomBytes(24).toString('base64url')}`, apiKey: key };
      endpoints.set(endpoint.id, endpoint);
      // The secret is in this answer only ("Only returned at creation").
      return json(res, 200, {
        id: endpoint.id,
        object: 'webhook_endpoint',
        api_version: null,
        application: null,
        created: Math.floor(Date.now() / 1000),
        description: null,
        enabled_events: enabledEvents,
        livemode: false,
        metadata: {},
        secret: endpoint.secret,
        status: 'enabled',
        url,
      });
    }

    const deleted = /^\/v1\/webhook_endpoints\/([^/?]+)$/.exec(path);
    if (req.method === 'DELETE' && deleted) {
      const id = decodeURIComponent(deleted[1]!);
      const endpoint = endpoints.get(id);
      if (!endpoint || endpoint.apiKey !== key) {
        return stripeError(res, 404, {
          type: 'invalid_request_error',
          code: 'resource_missing',
          param: 'id',
          doc_url: 'https://stripe.com/docs/error-codes/resource-missing',
          message: `No such webhook endpoint: '${id}'`,
        });
      }
      endpoints.delete(id);
      return json(res, 200, { id, object: 'webhook_endpoint', deleted: true });
    }
    return stripeError(res, 404, { type: 'invalid_request_error', message: `Unrecognized request URL (${req.method}: ${path}).` });
  };

  const server: Server = createServer({ key: certificate.key, cert: certificate.cert }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => handle(req, Buffer.concat(chunks).toString('utf8'), res));
  });
  server.on('tlsClientError', () => undefined);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `https://127.0.0.1:${port}`,
    requests,
    endpoints,
    acceptKey: (key) => void keys.add(key),
    failNext: (failure, count = 1) => {
      for (let i = 0; i < count; i += 1) failures.push(failure);
    },
    forget: (id) => void endpoints.delete(id),
    async send(target, type, options = {}) {
      const endpoint = typeof target === 'string' ? endpoints.get(target) : target;
      if (!endpoint) throw new Error(`no Stripe endpoint ${String(target)}`);
      const eventId = options.eventId ?? stripeId('evt');
      // The Event object as Stripe sends it (https://docs.stripe.com/api/events/object).
      const raw = JSON.stringify({
        id: eventId,
        object: 'event',
        api_version: '2024-06-20',
        created: Math.floor(Date.now() / 1000),
        data: { object: { id: stripeId('ch'), object: 'charge', amount: 2000, currency: 'usd', customer: 'cus_123' } },
        livemode: false,
        pending_webhooks: 1,
        request: { id: null, idempotency_key: null },
        type,
      });
      const timestamp = options.timestamp ?? Math.floor(Date.now() / 1000);
      const sign = (secret: string) => stripe.webhooks.generateTestHeaderString({ payload: raw, secret, timestamp });
      let header = options.signatureHeader ?? sign(options.secret ?? endpoint.secret);
      if (options.rotatedFrom !== undefined && options.signatureHeader === undefined) {
        // While a rolled secret is valid Stripe signs with both: t=…,v1=<old>,v1=<new>.
        const old = sign(options.rotatedFrom).split(',')[1]!;
        const [t, current] = header.split(',');
        header = `${t},${old},${current}`;
      }
      const answer = await fetch(endpoint.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json; charset=utf-8', 'stripe-signature': header, 'user-agent': 'Stripe/1.0 (+https://stripe.com/docs/webhooks)' },
        body: raw,
      });
      const text = await answer.text();
      return { status: answer.status, body: (text ? JSON.parse(text) : {}) as Record<string, unknown>, eventId, raw };
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
