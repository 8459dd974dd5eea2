import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import { context, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Span } from '@opentelemetry/api';
import { SERVICE_ATTRIBUTE, startSpan } from './tracing.js';

/** Probes and scrapes are not traced: they would bury the requests that matter. */
const UNTRACED_PATH = /^\/(health|metrics)(\/|\?|$)/;

const serverSpans = new WeakMap<IncomingMessage, Span>();

/**
 * Fastify's `serverFactory` for a service: every request (but health and metrics) runs in a
 * SERVER span that continues the caller's W3C `traceparent`, or starts a new trace. The span is
 * made here, around Fastify's handler, because a Fastify hook cannot make a context active for
 * the rest of the request; the request and response emitters are bound to it, so body parsing
 * and everything the route does after it stay in the span.
 */
export function tracedServerFactory(service: string) {
  return (handler: (req: IncomingMessage, res: ServerResponse) => void, options: ServerTimeouts = {}): http.Server =>
    withFastifyTimeouts(options, http.createServer((req, res) => {
      if (UNTRACED_PATH.test(req.url ?? '/')) {
        handler(req, res);
        return;
      }
      const parent = propagation.extract(ROOT_CONTEXT, req.headers);
      const method = req.method ?? 'GET';
      const span = startSpan(
        method,
        { kind: SpanKind.SERVER, attributes: { 'http.request.method': method, 'url.path': pathOf(req.url), [SERVICE_ATTRIBUTE]: service } },
        parent,
      );
      serverSpans.set(req, span);
      res.once('close', () => {
        span.setAttribute('http.response.status_code', res.statusCode);
        if (res.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
        span.end();
      });
      const active = trace.setSpan(parent, span);
      context.bind(active, req);
      context.bind(active, res);
      context.with(active, () => handler(req, res));
    }));
}

/** The server options Fastify applies to a server it makes itself; a `serverFactory` must apply them. */
interface ServerTimeouts {
  keepAliveTimeout?: number;
  requestTimeout?: number;
  connectionTimeout?: number;
  maxRequestsPerSocket?: number | null;
}

// As fastify's getServerInstance does, so a traced server keeps Fastify's timeouts (72 s
// keep-alive rather than Node's 5 s, which a load balancer's idle timeout would outlast).
function withFastifyTimeouts(options: ServerTimeouts, server: http.Server): http.Server {
  if (options.keepAliveTimeout !== undefined) server.keepAliveTimeout = options.keepAliveTimeout;
  if (options.requestTimeout !== undefined) server.requestTimeout = options.requestTimeout;
  if (options.connectionTimeout !== undefined) server.setTimeout(options.connectionTimeout);
  if (options.maxRequestsPerSocket) server.maxRequestsPerSocket = options.maxRequestsPerSocket;
  return server;
}

/** Names the request's span after its matched route (`POST /v1/...`), once the route is known. */
export function nameServerSpan(req: IncomingMessage, route: string | undefined): void {
  const span = serverSpans.get(req);
  if (!span || !route) return;
  span.updateName(`${req.method ?? 'GET'} ${route}`);
  span.setAttribute('http.route', route);
}

/** The path only: a query string may hold what a client did not mean to be recorded (an OAuth code, say). */
export function pathOf(url: string | undefined): string {
  const raw = url ?? '/';
  const query = raw.indexOf('?');
  return query === -1 ? raw : raw.slice(0, query);
}
