import type { StartInvocationReply } from './gen/runline/invocation/v1/commands_pb.js';

/** The spec's messages for a used-up monthly quota (429) and for one that cannot be checked (503). */
export const QUOTA_EXCEEDED_MESSAGE = 'Monthly API call quota exceeded';
export const QUOTA_UNAVAILABLE_MESSAGE = 'Unable to validate monthly API quota';

/**
 * Why a StartInvocation recorded no run, in the words a dead letter or a log should carry, or
 * null when a run was recorded. For callers without an HTTP answer to give (polls, dead-letter
 * replays): the gateway maps the same fields to 429 / 503 itself.
 */
export function notStartedReason(reply: StartInvocationReply): string | null {
  if (reply.invocationId !== '') return null;
  if (reply.quotaExceeded) return QUOTA_EXCEEDED_MESSAGE;
  if (reply.quotaUnavailable) return QUOTA_UNAVAILABLE_MESSAGE;
  return reply.unavailableReason || 'The run could not be started';
}
