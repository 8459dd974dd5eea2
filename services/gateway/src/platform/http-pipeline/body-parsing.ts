import type { FastifyInstance, FastifyRequest } from 'fastify';
import { BODY_ERRORS, parseJsonObject } from '../json/json-object.js';
import { ApiError } from './api-error.js';

interface BodyError {
  status: number;
  message: string;
}
type RequestWithBodyError = FastifyRequest & { bodyError?: BodyError; rawBody?: string | Buffer };

/**
 * JSON bodies only, up to `limitBytes` (larger ones get 413 before anything else is done with
 * them). A body that is not JSON is not answered at once: it is remembered and refused at the
 * body step of the pipeline, so version, token, project, switch, scope and type errors keep
 * their documented precedence. The same holds for a body nested deeper than MAX_BODY_DEPTH
 * (found by one pass over the text, before anything parses or walks it) and for a body that is
 * JSON but not an object (`null`, an array, a string, a number). `__proto__` and
 * `constructor.prototype` keys are dropped so a body can never reach an object's prototype.
 */
export function registerJsonBodyParser(fastify: FastifyInstance, limitBytes: number): void {
  fastify.removeAllContentTypeParsers();
  const parseJson = (request: FastifyRequest, body: string | Buffer, done: (error: Error | null, body?: unknown) => void) => {
    // Kept (a reference, no copy) for the inbound hooks, whose signature covers the bytes as sent.
    (request as RequestWithBodyError).rawBody = body;
    if (body.length === 0) {
      done(null, undefined);
      return;
    }
    const parsed = parseJsonObject(typeof body === 'string' ? body : body.toString('utf8'));
    if ('error' in parsed) deferBodyError(request, 400, parsed.error);
    done(null, 'error' in parsed ? undefined : parsed.value);
  };
  fastify.addContentTypeParser('application/json', { parseAs: 'string', bodyLimit: limitBytes }, parseJson);
  fastify.addContentTypeParser(/^application\/[\w.-]+\+json$/, { parseAs: 'string', bodyLimit: limitBytes }, parseJson);
  fastify.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: limitBytes }, (request, body, done) => {
    (request as RequestWithBodyError).rawBody = body;
    deferBodyError(request, 415, BODY_ERRORS.notJsonType);
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
  else if (typeof request.body !== 'object' || Array.isArray(request.body)) throw new ApiError(400, BODY_ERRORS.notObject);
}

/** The request body as it was sent (UTF-8 bytes of a JSON body); empty when there was none. */
export function rawBodyOf(request: FastifyRequest): Buffer {
  const { rawBody } = request as RequestWithBodyError;
  if (rawBody === undefined) return Buffer.alloc(0);
  return typeof rawBody === 'string' ? Buffer.from(rawBody, 'utf8') : rawBody;
}

