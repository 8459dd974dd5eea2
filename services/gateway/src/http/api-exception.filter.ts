import { type ArgumentsHost, Catch, type ExceptionFilter, HttpException, HttpStatus, Inject } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { FastifyRequest } from 'fastify';
import { isTransientDatabaseError } from '@runline/db';
import { LOGGER } from '@runline/runtime';
import { API_ERRORS } from './api-error.js';
import type { Logger } from '@runline/observability';

/**
 * Every error leaves the gateway as `{ error: string, ...extra }`. Nest's own exceptions
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
    const [status, body] = this.toAnswer(exception, http.getRequest<FastifyRequest>());
    this.adapterHost.httpAdapter.reply(http.getResponse(), body, status);
  }

  private toAnswer(exception: unknown, request: FastifyRequest): [number, Record<string, unknown>] {
    // Fastify's body-size error arrives already mapped to an HttpException by Nest's adapter.
    if (exception instanceof HttpException && exception.getStatus() === HttpStatus.PAYLOAD_TOO_LARGE) {
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
