/**
 * The spec's error messages that every pipeline shares (and a few of ours, marked): the version
 * hook, the token and console guards, the rate limit, the exception filter and the service client
 * answer with them, and the routes of several features document them. One place, so a typo cannot
 * split them. A feature's own messages live in its folder (`<feature>/<name>-messages.ts`).
 */
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
  rateLimitExceeded: 'Rate limit exceeded',
  tokenMismatch: 'Token does not match invocation',
  invocationNotFound: 'Invocation not found',
  unauthorized: 'Unauthorized',
  invocationServiceUnavailable: 'Invocation service unavailable, retry shortly',
  // Ours: the gateway's own database did not answer (a cut connection, a restart).
  serviceTemporarilyUnavailable: 'Service temporarily unavailable, retry shortly',
  // The inbound hooks' 413 (DESIGN section 9). Here, not in hooks/, because the exception filter
  // answers it: Fastify refuses the body before the hook's controller runs.
  webhookPayloadTooLarge: 'Payload too large',
} as const;
