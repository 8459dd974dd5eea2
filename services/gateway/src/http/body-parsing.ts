import type { FastifyInstance, FastifyRequest } from 'fastify';
import secureJson from 'secure-json-parse';
import { ApiError } from './api-error.js';

interface BodyError {
  status: number;
  message: string;
}
type RequestWithBodyError = FastifyRequest & { bodyError?: BodyError; rawBody?: string | Buffer };

/**
 * Deepest nesting of objects and arrays a body may have. Real payloads stay far below; the
 * limit keeps every later walk of the body (validation, redaction, expressions) from running
 * out of stack on a body built to do exactly that.
 */
export const MAX_BODY_DEPTH = 64;

export const BODY_ERRORS = {
  notJson: 'Request body must be valid JSON',
  notObject: 'Request body must be a JSON object',
  tooDeep: `Request body is nested too deeply (at most ${MAX_BODY_DEPTH} levels)`,
  nul: 'Request body must not contain the NUL character (\\u0000)',
  notJsonType: 'Request body must be JSON (Content-Type: application/json)',
} as const;

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

/**
 * A JSON body's text as an object, or the 400 message of the first rule it breaks, in this order:
 * nested deeper than MAX_BODY_DEPTH (one pass over the text, before anything parses or walks
 * it), not JSON, not an object, holding a NUL. `__proto__` and `constructor.prototype` keys are
 * dropped. The one place for these rules: every route's body and an inbound hook's delivery.
 */
export function parseJsonObject(text: string): { value: Record<string, unknown> } | { error: string } {
  if (nestingDepthExceeds(text, MAX_BODY_DEPTH)) return { error: BODY_ERRORS.tooDeep };
  let parsed: unknown;
  try {
    parsed = secureJson.parse(text, undefined, { protoAction: 'remove', constructorAction: 'remove' });
  } catch {
    return { error: BODY_ERRORS.notJson };
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) return { error: BODY_ERRORS.notObject };
  if (containsNul(text)) return { error: BODY_ERRORS.nul };
  return { value: parsed as Record<string, unknown> };
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

/**
 * Whether valid JSON `text` holds a NUL character anywhere (in a key or a string). PostgreSQL
 * stores no NUL in `text` or `jsonb`, so such a body would fail where it is written, long after
 * the request was checked: it is refused here. Raw control characters are not valid JSON, so
 * only the escape `\u0000` can bring one (not `\\u0000`, an escaped backslash before `u0000`).
 */
export function containsNul(text: string): boolean {
  return /(?<!\\)(?:\\\\)*\\u0000/.test(text);
}

/**
 * Whether `{`/`[` nest deeper than `limit` anywhere in `text`, counting outside strings only.
 * One pass, no recursion, so no body can make this overflow the stack.
 */
export function nestingDepthExceeds(text: string, limit: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) {
      if (++depth > limit) return true;
    } else if (c === 0x7d || c === 0x5d) depth--;
  }
  return false;
}
