import { HttpException } from '@nestjs/common';

/**
 * An error answered as the spec shapes it: `{ error: message, ...extra }`. Clients match on
 * the status and the documented messages, so messages here are the spec's, word for word.
 */
export class ApiError extends HttpException {
  constructor(status: number, message: string, extra: Record<string, unknown> = {}) {
    super({ error: message, ...extra }, status);
  }
}

/** The spec's error messages, in one place so a typo cannot split them. */
export const API_ERRORS = {
  unsupportedVersion: 'Unsupported API version',
  missingToken: 'Missing API token',
  invalidToken: 'Invalid API token',
  projectNotFound: 'Project not found',
  externalApiDisabled: 'External API access is disabled for this project',
  insufficientScope: 'Insufficient token scope',
  botChatbotOnly: 'Bot message API is only available for chatbot projects',
  automationsUseAutomationApi: 'Automation projects must use the automation trigger API',
  automationOnly: 'Automation trigger API is only available for automation projects',
  typeNotSupported: 'External API access is not supported for this project type',
  tokenMismatch: 'Token does not match invocation',
  invocationNotFound: 'Invocation not found',
  unauthorized: 'Unauthorized',
  syncTriggerFailed: 'Flow sync trigger failed',
  invocationServiceUnavailable: 'Invocation service unavailable, retry shortly',
  runNotStarted: 'The run could not be started, retry with the same idempotency key',
} as const;
