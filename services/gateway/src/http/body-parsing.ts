import { type CallHandler, type ExecutionContext, Injectable, type NestInterceptor } from '@nestjs/common';
import express, { type NextFunction, type Request, type Response } from 'express';
import type { Observable } from 'rxjs';
import { ApiError } from './api-error.js';

interface BodyError {
  status: number;
  message: string;
}
type RequestWithBodyError = Request & { bodyError?: BodyError };

export function jsonBodyParser(limitBytes: number) {
  return express.json({ limit: limitBytes, type: ['application/json', 'application/*+json'] });
}

/**
 * A body that is too large or not JSON is not answered at once: it is remembered and refused
 * at the body step of the pipeline, so version, token, project, switch, scope and type errors
 * keep their documented precedence over it.
 */
export function deferBodyErrors(error: unknown, req: Request, _res: Response, next: NextFunction): void {
  const type = (error as { type?: string }).type;
  if (type === 'entity.too.large') {
    (req as RequestWithBodyError).bodyError = { status: 413, message: 'Request body too large' };
  } else if (type === 'entity.parse.failed' || type === 'encoding.unsupported' || type === 'charset.unsupported') {
    (req as RequestWithBodyError).bodyError = { status: 400, message: 'Request body must be valid JSON' };
  } else {
    next(error);
    return;
  }
  req.body = undefined;
  next();
}

/** Raises the remembered body error after the guards have passed, before validation. */
@Injectable()
export class BodyErrorInterceptor implements NestInterceptor {
  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const request = context.switchToHttp().getRequest<RequestWithBodyError>();
    if (request.bodyError) throw new ApiError(request.bodyError.status, request.bodyError.message);
    if (request.body === undefined) request.body = {};
    else if (request.body === null || typeof request.body !== 'object' || Array.isArray(request.body)) {
      throw new ApiError(400, 'Request body must be a JSON object');
    }
    return next.handle();
  }
}
