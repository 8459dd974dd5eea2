import { inReadModelKeyOrder } from '../platform/invocations/read-model-key-order.js';
import type { EndedRun } from './start-run.handler.js';

/**
 * `Prefer: wait=N` (DESIGN section 14): the answer to an async run request whose run ended
 * within N seconds is the body the matching sync endpoint gives for a finished run
 * (`resultOf` in start-run.handler.ts): `{invocationId, status, result}` (and a bot's
 * `sessionId`), or for a FAILED or TIMEOUT run the sync failure's `{error, invocationId,
 * status}`, with status 200 either way: the request itself succeeded. `invocation` is the run
 * as GET shows it, or what its final event or its inline end said (`invocationId`, `status`,
 * `result`, `errorMessage`); the result reads as GET gives it either way, keys in the same order.
 */
export function endedRunAnswer(invocation: Record<string, unknown>, accepted: Record<string, unknown>): Record<string, unknown> {
  // What the accepted answer said of the request itself stays: a bot's session, an idempotent replay.
  const session = {
    ...(typeof accepted.sessionId === 'string' ? { sessionId: accepted.sessionId } : {}),
    ...(accepted.idempotentReplay === true ? { idempotentReplay: true } : {}),
  };
  const { invocationId, status } = invocation;
  if (status === 'FAILED' || status === 'TIMEOUT') {
    return { error: (invocation.errorMessage as string | null) || 'Run failed', invocationId, status, ...session };
  }
  return { invocationId, status, result: inReadModelKeyOrder(invocation.result ?? null), ...session };
}

/** An async run executed inline, as its StartInvocation reply says it ended: what `endedRunAnswer` takes. */
export function endedInlineRun(invocationId: string, ended: EndedRun): Record<string, unknown> {
  return {
    invocationId,
    status: ended.status,
    result: ended.resultJson ? (JSON.parse(ended.resultJson) as unknown) : null,
    errorMessage: ended.errorMessage || null,
  };
}
