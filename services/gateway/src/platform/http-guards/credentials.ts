import type { FastifyRequest } from 'fastify';

/**
 * What a caller presented: a console JWT (`Authorization: Bearer <jwt>`), an API token
 * (`Authorization: Bearer <token>` or `x-api-key: <token>`), or nothing (null). A JWT is three
 * dot-separated base64url parts; an API token never holds a dot, so the shape alone tells them
 * apart without verifying anything. The routes that both kinds may call
 * (`/external-invocations/{id}`) go by this: a JWT is the console's, anything else passes the
 * token pipeline (so a malformed token still gets the spec's `Invalid API token`).
 */
export type Credential = { kind: 'console-jwt'; value: string } | { kind: 'api-token'; value: string } | null;

const JWT_SHAPE = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;

export function presentedCredential(request: Pick<FastifyRequest, 'headers'>): Credential {
  const authorization = request.headers.authorization;
  if (typeof authorization === 'string') {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
    if (match) {
      const value = match[1]!;
      return JWT_SHAPE.test(value) ? { kind: 'console-jwt', value } : { kind: 'api-token', value };
    }
  }
  const apiKey = request.headers['x-api-key'];
  if (typeof apiKey === 'string' && apiKey.trim() !== '') return { kind: 'api-token', value: apiKey.trim() };
  return null;
}
