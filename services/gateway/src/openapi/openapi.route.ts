import type { FastifyInstance } from 'fastify';
import { buildOpenApiDocument, OPENAPI_PATH } from './openapi-document.js';

/** A route as Fastify registered it: `GET /v1/orgs/:orgId/plan`. */
export interface RegisteredRoute {
  method: string;
  url: string;
}

const registered = new WeakMap<FastifyInstance, RegisteredRoute[]>();

/**
 * Serves the published document at `GET /v1/openapi.json` (no credential: it describes, it
 * holds nothing), and keeps the list of every route Fastify registers from here on, which the
 * route-coverage test compares with the document.
 */
export function registerOpenApiRoute(fastify: FastifyInstance): void {
  const routes: RegisteredRoute[] = [];
  registered.set(fastify, routes);
  fastify.addHook('onRoute', (route) => {
    for (const method of [route.method].flat()) routes.push({ method, url: route.url });
  });
  let body: string | undefined;
  fastify.get(OPENAPI_PATH, (_request, reply) => {
    // Built on first use, then kept: the routes cannot change while the process runs.
    body ??= JSON.stringify(buildOpenApiDocument());
    void reply.header('content-type', 'application/json; charset=utf-8').header('cache-control', 'public, max-age=300').send(body);
  });
}

/** Every route the gateway registered after registerOpenApiRoute, the document's own included. */
export function registeredRoutes(fastify: FastifyInstance): readonly RegisteredRoute[] {
  return registered.get(fastify) ?? [];
}
