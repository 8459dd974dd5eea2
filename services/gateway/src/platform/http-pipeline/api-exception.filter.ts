import { type ArgumentsHost, Catch, type ExceptionFilter, HttpException, HttpStatus, Inject } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { isTransientDatabaseError } from '@runline/db';
import type { Logger } from '@runline/observability';
import { LOGGER } from '@runline/runtime';
import { DomainError, type DomainErrorKind, type Refusal } from '../errors/domain-error.js';
import { API_ERRORS } from '../errors/error-messages.js';

/** The one place a refusal of the gateway's core gets its HTTP status. */
const STATUS_OF: Readonly<Record<DomainErrorKind, number>> = {
  invalid: HttpStatus.BAD_REQUEST,
  unauthenticated: HttpStatus.UNAUTHORIZED,
  forbidden: HttpStatus.FORBIDDEN,
  'not-found': HttpStatus.NOT_FOUND,
  conflict: HttpStatus.CONFLICT,
  unprocessable: HttpStatus.UNPROCESSABLE_ENTITY,
  'rate-limited': HttpStatus.TOO_MANY_REQUESTS,
  'quota-exceeded': HttpStatus.TOO_MANY_REQUESTS,
  failed: HttpStatus.INTERNAL_SERVER_ERROR,
  unavailable: HttpStatus.SERVICE_UNAVAILABLE,
  incomplete: HttpStatus.BAD_GATEWAY,
  'upstream-failed': HttpStatus.BAD_GATEWAY,
};

/** A refusal as the client gets it: status, `{ error: message, ...extra }` and headers of its own. */
export interface RefusalAnswer {
  status: number;
  body: Record<string, unknown>;
  headers?: Record<string, string>;
}

/**
 * The answer to a refusal, thrown (DomainError, through the filter below) or returned (a run
 * that could not start). A used-up quota shows its numbers in the body and, on this response
 * only, in the X-Quota headers.
 */
export function refusalAnswer(refusal: Refusal): RefusalAnswer {
  const status = STATUS_OF[refusal.kind];
  const { quota } = refusal;
  if (quota) {
    return {
      status,
      body: { error: refusal.message, quota: { limit: quota.limit, used: quota.used } },
      headers: {
        'x-quota-limit': String(quota.limit),
        'x-quota-used': String(quota.used),
        'x-quota-remaining': String(Math.max(0, quota.limit - quota.used)),
        'x-quota-period-start': quota.periodStart,
      },
    };
  }
  return { status, body: refusal.extra ? { error: refusal.message, ...refusal.extra } : { error: refusal.message } };
}

/**
 * Every error leaves the gateway as `{ error: string, ...extra }`. Refusals of the core
 * (DomainError) get their status from STATUS_OF above. Nest's own exceptions
 * (unknown route, validation) and Fastify's (body too large) are reshaped; a database that is
 * passingly unreachable is a 503 (retry); other unexpected errors become a 500 whose details go
 * to the log, never to the client.
 */
@Catch()
export class ApiExceptionFilter implements ExceptionFilter {
  constructor(
    @Inject(LOGGER) private readonly logger: Logger,
    private readonly adapterHost: HttpAdapterHost,
  ) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    if (exception instanceof DomainError) {
      const answer = refusalAnswer(exception);
      if (answer.headers) void http.getResponse<FastifyReply>().headers(answer.headers);
      this.adapterHost.httpAdapter.reply(http.getResponse(), answer.body, answer.status);
      return;
    }
    const [status, body] = this.toAnswer(exception, http.getRequest<FastifyRequest>());
    this.adapterHost.httpAdapter.reply(http.getResponse(), body, status);
  }

  private toAnswer(exception: unknown, request: FastifyRequest): [number, Record<string, unknown>] {
    // Fastify's body-size error arrives already mapped to an HttpException by Nest's adapter.
    if (exception instanceof HttpException && exception.getStatus() === HttpStatus.PAYLOAD_TOO_LARGE) {
      // An inbound hook says it in DESIGN section 9's words.
      if (request.url.startsWith('/v1/hooks/')) return [HttpStatus.PAYLOAD_TOO_LARGE, { error: API_ERRORS.webhookPayloadTooLarge }];
      return [HttpStatus.PAYLOAD_TOO_LARGE, { error: FASTIFY_MESSAGES.FST_ERR_CTP_BODY_TOO_LARGE! }];
    }
    if (exception instanceof HttpException) return [exception.getStatus(), toBody(exception)];
    const fastifyError = exception as { code?: unknown; statusCode?: unknown };
    if (typeof fastifyError.code === 'string' && fastifyError.code.startsWith('FST_') && typeof fastifyError.statusCode === 'number' && fastifyError.statusCode < 500) {
      const message = FASTIFY_MESSAGES[fastifyError.code] ?? (exception as Error).message;
      return [fastifyError.statusCode, { error: message }];
    }
    if (isTransientDatabaseError(exception)) {
      this.logger.warn({ err: exception, requestId: request.id, method: request.method, path: request.url }, 'database unavailable; answered 503');
      return [HttpStatus.SERVICE_UNAVAILABLE, { error: API_ERRORS.serviceTemporarilyUnavailable }];
    }
    this.logger.error({ err: exception, requestId: request.id, method: request.method, path: request.url }, 'unhandled error');
    return [HttpStatus.INTERNAL_SERVER_ERROR, { error: 'Internal server error' }];
  }
}

const FASTIFY_MESSAGES: Record<string, string> = {
  FST_ERR_CTP_BODY_TOO_LARGE: 'Request body too large',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'Request body length does not match Content-Length',
};

function toBody(exception: HttpException): Record<string, unknown> {
  const body = exception.getResponse();
  if (typeof body === 'string') return { error: body };
  const record = body as Record<string, unknown>;
  if (typeof record.error === 'string' && !('statusCode' in record)) return record;
  // Terminus health reports keep their own shape.
  if ('status' in record && 'details' in record) return record;
  if (exception.getStatus() === HttpStatus.NOT_FOUND) return { error: 'Not found' };
  const message = Array.isArray(record.message) ? record.message[0] : record.message;
  return { error: typeof message === 'string' ? message : exception.message };
}
