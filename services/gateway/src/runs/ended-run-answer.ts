/**
 * `Prefer: wait=N` (DESIGN section 14): the answer to an async run request whose run ended
 * within N seconds is the body the matching sync endpoint gives for a finished run
 * (`resultOf` in start-run.handler.ts): `{invocationId, status, result}` (and a bot's
 * `sessionId`), or for a FAILED or TIMEOUT run the sync failure's `{error, invocationId,
 * status}`, with status 200 either way: the request itself succeeded.
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
  return { invocationId, status, result: invocation.result ?? null, ...session };
}
