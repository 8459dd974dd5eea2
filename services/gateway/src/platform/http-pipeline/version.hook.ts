import type { FastifyInstance } from 'fastify';
import { API_ERRORS } from '../errors/error-messages.js';

export const SUPPORTED_VERSIONS = ['v1'] as const;

const VERSIONED_PATH = /^\/([^/?]+)\/orgs(?:[/?]|$)/;

/**
 * The first check of the pipeline: `/{version}/orgs/...` with any version but v1 is refused
 * before anything else is looked at (before routing, before the body is read), for external
 * and console routes alike.
 */
export function registerVersionCheck(fastify: FastifyInstance): void {
  fastify.addHook('onRequest', (request, reply, done) => {
    const match = VERSIONED_PATH.exec(request.url);
    if (match && !(SUPPORTED_VERSIONS as readonly string[]).includes(match[1]!)) {
      void reply
        .code(400)
        .send({ error: API_ERRORS.unsupportedVersion, code: 'UNSUPPORTED_API_VERSION', supportedVersions: [...SUPPORTED_VERSIONS] });
      return;
    }
    done();
  });
}
