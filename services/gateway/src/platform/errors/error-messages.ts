/** The spec's error messages (and a few of ours, marked), in one place so a typo cannot split them. */
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
  syncTriggerFailed: 'Flow sync trigger failed',
  invocationServiceUnavailable: 'Invocation service unavailable, retry shortly',
  // Ours (the spec has none): a cancel or reschedule the scheduler did not answer.
  schedulerServiceUnavailable: 'Scheduler service unavailable, retry shortly',
  runNotStarted: 'The run could not be started, retry with the same idempotency key',
  // Ours: the gateway's own database did not answer (a cut connection, a restart).
  serviceTemporarilyUnavailable: 'Service temporarily unavailable, retry shortly',
  // Scheduling rules (async triggers and PATCH reschedule); README "Runs" gives the order.
  schedulingBothFields: 'Provide either runAt or delaySeconds, not both',
  runAtInvalid: 'runAt must be a valid ISO date-time',
  runAtNotInFuture: 'runAt must be in the future',
  delaySecondsInvalid: 'delaySeconds must be a positive number',
  // Our upper bound (the spec gives none): MAX_SCHEDULE_AHEAD_DAYS in scheduling-fields.ts.
  runAtTooFar: 'runAt must be at most 365 days in the future',
  delaySecondsTooLarge: 'delaySeconds must be at most 31536000 (365 days)',
  // PATCH /external-invocations/{id}. The body messages are ours; the 409s are the spec's.
  actionRequired: 'action is required',
  actionInvalid: 'action must be one of: cancel, reschedule, approve, reject',
  cancelTakesNoFields: 'cancel takes no fields other than action',
  rescheduleNeedsTime: 'reschedule needs runAt or delaySeconds',
  notAsync: 'Only async invocations can be modified',
  notScheduled: 'Only scheduled invocations can be modified',
  noLongerScheduled: 'Invocation is no longer scheduled',
  // PATCH approve/reject (console JWT). The 409 and 502 are the spec's; the body messages are ours.
  notAwaitingApproval: 'Invocation is not waiting for approval',
  approvalNotResumed: 'Failed to resume the automation after recording the decision',
  approvalCommentInvalid: 'comment must be a string of at most 2000 characters',
  approvalTakesComment: 'approve and reject take no fields other than action and comment',
  // Inbound hooks (DESIGN section 9). `Method not allowed` and the 422's `Trigger check failed` are ours.
  webhookNotFound: 'Webhook not found',
  webhookRevoked: 'Webhook has been revoked',
  webhookInvalidSignature: 'Invalid signature',
  webhookStaleTimestamp: 'Timestamp outside the tolerance',
  webhookDeliveryRepeated: 'Delivery already received',
  webhookPayloadTooLarge: 'Payload too large',
  webhookMethodNotAllowed: 'Method not allowed',
  // Managed webhook subscriptions (DESIGN section 9). The 409 before publishing is DESIGN's; the rest are ours.
  subscriptionNeedsPublish: 'Publish the project before adding a subscription',
  subscriptionNotFound: 'Subscription not found',
  subscriptionNotFailed: 'Only a FAILED subscription can be retried',
  subscriptionInProgress: 'The subscription is being created at the provider, retry shortly',
  /** 502 when the provider did not remove the webhook on revoke; the provider's message follows. */
  subscriptionNotRemoved: 'The provider did not remove the webhook:',
} as const;
