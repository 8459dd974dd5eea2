import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { Counter, Histogram, type Registry } from 'prom-client';
import { nameServerSpan, pathOf } from './http-tracing.js';

export const REQUEST_ID_HEADER = 'x-request-id';

// A caller's id is kept only if it is short and plain, so it is safe to log and echo back.
const ACCEPTABLE_REQUEST_ID = /^[A-Za-z0-9._-]{1,128}$/;

/** Fastify's `genReqId`: the caller's `x-request-id` when it is sane, otherwise a new UUID. */
export function requestIdFor(request: IncomingMessage): string {
  const incoming = request.headers[REQUEST_ID_HEADER];
  return typeof incoming === 'string' && ACCEPTABLE_REQUEST_ID.test(incoming) ? incoming : randomUUID();
}

/**
 * Per request, in two Fastify hooks: echoes the request id on every response (errors and 404s
 * included), counts and times the request by method, matched route and status, and writes one
 * debug access line. Its path leaves the query string out and its headers pass the logger's
 * redaction, so tokens and codes never reach the log; at the default `info` level the line is
 * skipped before it is built.
 */
export function instrumentHttp(fastify: FastifyInstance, options: { registry: Registry; logger: Logger }): void {
  const labelNames = ['method', 'route', 'status_code'] as const;
  const duration = new Histogram({
    name: 'runline_http_request_duration_seconds',
    help: 'Time to answer an HTTP request.',
    labelNames,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10],
    registers: [options.registry],
  });
  const total = new Counter({ name: 'runline_http_requests_total', help: 'HTTP requests answered.', labelNames, registers: [options.registry] });
  const { logger } = options;

  fastify.addHook('onRequest', (request, reply, done) => {
    reply.header(REQUEST_ID_HEADER, request.id);
    nameServerSpan(request.raw, request.routeOptions.url);
    done();
  });
  fastify.addHook('onResponse', (request, reply, done) => {
    // The route pattern, not the raw path, keeps label cardinality bounded.
    const labels = { method: request.method, route: request.routeOptions.url ?? 'unmatched', status_code: String(reply.statusCode) };
    duration.observe(labels, reply.elapsedTime / 1000);
    total.inc(labels);
    if (logger.isLevelEnabled('debug')) {
      logger.debug(
        { requestId: request.id, method: request.method, path: pathOf(request.url), status: reply.statusCode, durationMs: reply.elapsedTime, headers: request.headers },
        'request',
      );
    }
    done();
  });
}
