import { existsSync } from 'node:fs';
import path from 'node:path';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { findConsoleFiles } from './console-files.js';

export const CONSOLE_PATH = '/console/';

/**
 * What the console's page may load: only its own scripts and styles, and only the gateway's
 * API. No inline script, no framing (clickjacking), no plugins; `base-uri` pinned so injected
 * markup cannot redirect relative URLs.
 */
export const CONSOLE_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

/** A file name Vite writes: no `..`, no hidden files, no odd characters. */
const SAFE_FILE = /^(?:[A-Za-z0-9_-][A-Za-z0-9._-]*\/)*[A-Za-z0-9_-][A-Za-z0-9._-]*$/;

function pageHeaders(reply: FastifyReply): FastifyReply {
  return reply
    .header('content-security-policy', CONSOLE_CSP)
    .header('x-content-type-options', 'nosniff')
    .header('x-frame-options', 'DENY')
    .header('referrer-policy', 'no-referrer');
}

/**
 * The web console, from the same process and port as the API: `GET /` redirects to
 * `/console/`, files Vite built are served as they are, and every other path under /console/
 * gets the app's page (the app routes in the browser). Routes named explicitly elsewhere
 * under /console/ (say `/console/config.json`) win over the catch-all, whatever the order of
 * registration.
 */
export function registerConsoleSite(fastify: FastifyInstance, root: string | null = findConsoleFiles()): void {
  // preCompressed: the build writes `.br` and `.gz` beside each file; a browser that accepts
  // one gets it.
  if (root) void fastify.register(fastifyStatic, { root, serve: false, preCompressed: true });

  fastify.get('/', (_request, reply) => reply.redirect(CONSOLE_PATH, 302));
  fastify.get('/console', (_request, reply) => reply.redirect(CONSOLE_PATH, 302));
  fastify.get('/console/*', (request, reply) => {
    if (!root) {
      return reply.code(503).send({ error: 'The console is not built: run `npm run build`' });
    }
    const file = (request.params as { '*': string })['*'];
    if (file.startsWith('assets/')) {
      // Vite names each asset by its content hash, so a name never changes meaning.
      if (!SAFE_FILE.test(file) || !existsSync(path.join(root, file))) return reply.code(404).send({ error: 'Not found' });
      return reply.header('x-content-type-options', 'nosniff').sendFile(file, { immutable: true, maxAge: '365d' });
    }
    // A name with an extension is a file: served when Vite wrote it, else 404 (so a route a
    // feature adds later, like `/console/config.json`, is plainly absent until then).
    if (/\.[A-Za-z0-9]+$/.test(file)) {
      if (!SAFE_FILE.test(file) || !existsSync(path.join(root, file))) return reply.code(404).send({ error: 'Not found' });
      return reply.header('x-content-type-options', 'nosniff').header('cache-control', 'no-cache').sendFile(file, { cacheControl: false });
    }
    // Every other path is a page of the app (it routes in the browser). The page is always
    // revalidated, so a new build is picked up at once.
    return pageHeaders(reply).header('cache-control', 'no-cache').sendFile('index.html', { cacheControl: false });
  });
}
