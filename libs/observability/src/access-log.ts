import type { NextFunction, Request, Response } from 'express';
import type { Logger } from 'pino';

/**
 * One debug line per request (method, route, status, duration, request id, headers). Headers
 * pass through the logger's redaction, so tokens never reach the log; at the default `info`
 * level the line is skipped before it is built.
 */
export function accessLogMiddleware(logger: Logger) {
  return (req: Request, res: Response, next: NextFunction): void => {
    if (!logger.isLevelEnabled('debug')) {
      next();
      return;
    }
    const started = process.hrtime.bigint();
    res.on('finish', () => {
      logger.debug(
        {
          requestId: (req as Request & { id?: string }).id,
          method: req.method,
          path: req.path,
          status: res.statusCode,
          durationMs: Number(process.hrtime.bigint() - started) / 1e6,
          headers: req.headers,
        },
        'request',
      );
    });
    next();
  };
}
