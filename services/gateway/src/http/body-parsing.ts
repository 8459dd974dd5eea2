import { type CallHandler, type ExecutionContext, Injectable, type NestInterceptor } from '@nestjs/common';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Observable } from 'rxjs';
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

/** Raises the remembered body error after the guards have passed, before validation. */
@Injectable()
export class BodyErrorInterceptor implements NestInterceptor {
  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const request = context.switchToHttp().getRequest<RequestWithBodyError>();
    if (request.bodyError) throw new ApiError(request.bodyError.status, request.bodyError.message);
    if (request.body === undefined || request.body === null) request.body = {};
    else if (typeof request.body !== 'object' || Array.isArray(request.body)) {
      throw new ApiError(400, 'Request body must be a JSON object');
    }
    return next.handle();
  }
}
