import type { StartInvocationReply } from './gen/runline/invocation/v1/commands_pb.js';

/**
 * Why a StartInvocation recorded no run, in the words a dead letter or a log should carry, or
 * null when a run was recorded. For callers without an HTTP answer to give (polls, dead-letter
 * replays): the gateway maps the same fields to 429 / 503 itself.
 */
export function notStartedReason(reply: StartInvocationReply): string | null {
  if (reply.invocationId !== '') return null;
  if (reply.quotaExceeded) return 'Monthly API call quota exceeded';
  if (reply.quotaUnavailable) return 'Unable to validate monthly API quota';
  return reply.unavailableReason || 'The run could not be started';
}
