/**
 * What the run routes refuse with: the spec's words unless marked ours. The pipeline's messages
 * (token, scope, rate limit, a service that did not answer) are platform's API_ERRORS.
 */
export const RUN_MESSAGES = {
  syncTriggerFailed: 'Flow sync trigger failed',
  // Ours (the spec has none): a cancel or reschedule the scheduler did not answer.
  schedulerServiceUnavailable: 'Scheduler service unavailable, retry shortly',
  runNotStarted: 'The run could not be started, retry with the same idempotency key',
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
} as const;
