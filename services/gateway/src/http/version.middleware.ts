import type { NextFunction, Request, Response } from 'express';
import { API_ERRORS } from './api-error.js';

export const SUPPORTED_VERSIONS = ['v1'] as const;

const VERSIONED_PATH = /^\/([^/]+)\/orgs(?:\/|$)/;

/**
 * The first check of the pipeline: `/{version}/orgs/...` with any version but v1 is refused
 * before anything else is looked at, for external and console routes alike.
 */
export function versionMiddleware(req: Request, res: Response, next: NextFunction): void {
  const match = VERSIONED_PATH.exec(req.path);
  if (match && !(SUPPORTED_VERSIONS as readonly string[]).includes(match[1]!)) {
    res.status(400).json({ error: API_ERRORS.unsupportedVersion, code: 'UNSUPPORTED_API_VERSION', supportedVersions: [...SUPPORTED_VERSIONS] });
    return;
  }
  next();
}
