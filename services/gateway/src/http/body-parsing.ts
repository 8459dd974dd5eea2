import type { FastifyInstance, FastifyRequest } from 'fastify';
import secureJson from 'secure-json-parse';
import { ApiError } from './api-error.js';

interface BodyError {
  status: number;
  message: string;
}
type RequestWithBodyError = FastifyRequest & { bodyError?: BodyError };

/**
 * JSON bodies only, up to `limitBytes` (larger ones get 413 before anything else is done with
 * them). A body that is not JSON is not answered at once: it is remembered and refused at the
 * body step of the pipeline, so version, token, project, switch, scope and type errors keep
 * their documented precedence. `__proto__` and `constructor.prototype` keys are dropped so a
 * body can never reach an object's prototype.
 */
export function registerJsonBodyParser(fastify: FastifyInstance, limitBytes: number): void {
  fastify.removeAllContentTypeParsers();
  const parseJson = (request: FastifyRequest, body: string | Buffer, done: (error: Error | null, body?: unknown) => void) => {
    if (body.length === 0) {
      done(null, undefined);
      return;
    }
    try {
      done(null, secureJson.parse(body, undefined, { protoAction: 'remove', constructorAction: 'remove' }));
    } catch {
      deferBodyError(request, 400, 'Request body must be valid JSON');
      done(null, undefined);
    }
  };
  fastify.addContentTypeParser('application/json', { parseAs: 'string', bodyLimit: limitBytes }, parseJson);
  fastify.addContentTypeParser(/^application\/[\w.-]+\+json$/, { parseAs: 'string', bodyLimit: limitBytes }, parseJson);
  fastify.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: limitBytes }, (request, _body, done) => {
    deferBodyError(request, 415, 'Request body must be JSON (Content-Type: application/json)');
    done(null, undefined);
  });
}

function deferBodyError(request: FastifyRequest, status: number, message: string): void {
  (request as RequestWithBodyError).bodyError = { status, message };
}

/**
 * The body step of the pipeline, called by the guards once everything before it has passed:
 * raises a remembered parse error, and makes sure the body is a JSON object ({} when absent).
 */
export function assertJsonObjectBody(request: FastifyRequest): void {
  const { bodyError } = request as RequestWithBodyError;
  if (bodyError) throw new ApiError(bodyError.status, bodyError.message);
  if (request.body === undefined || request.body === null) request.body = {};
  else if (typeof request.body !== 'object' || Array.isArray(request.body)) throw new ApiError(400, 'Request body must be a JSON object');
}
