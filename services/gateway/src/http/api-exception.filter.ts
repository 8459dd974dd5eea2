import { type ArgumentsHost, Catch, type ExceptionFilter, HttpException, HttpStatus, Inject } from '@nestjs/common';
import type { Request, Response } from 'express';
import { LOGGER } from '@runline/runtime';
import type { Logger } from '@runline/observability';

/**
 * Every error leaves the gateway as `{ error: string, ...extra }`. Nest's own exceptions
 * (unknown route, validation) are reshaped; unexpected errors become a 500 whose details go to
 * the log, never to the client.
 */
@Catch()
export class ApiExceptionFilter implements ExceptionFilter {
  constructor(@Inject(LOGGER) private readonly logger: Logger) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    const response = http.getResponse<Response>();
    const request = http.getRequest<Request & { id?: string }>();
    if (exception instanceof HttpException) {
      response.status(exception.getStatus()).json(toBody(exception));
      return;
    }
    this.logger.error({ err: exception, requestId: request.id, method: request.method, path: request.path }, 'unhandled error');
    response.status(HttpStatus.INTERNAL_SERVER_ERROR).json({ error: 'Internal server error' });
  }
}

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
