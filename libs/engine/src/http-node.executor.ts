import type { HttpCall, HttpReply, RunPorts } from './run.types.js';

/** How an outbound call ended, from the run's point of view. */
export type DeadlineAnswer =
  | { readonly kind: 'reply'; readonly reply: HttpReply }
  | { readonly kind: 'error'; readonly reason: string }
  | { readonly kind: 'timeout' };

const TIMED_OUT = Symbol('timed out');

/**
 * The port's own time limit runs this much past the run's deadline, so the deadline decides:
 * two timers of the same length race, and a timer may fire a few milliseconds before
 * `Date.now()` reaches its time (libuv measures from the loop's cached clock). A port that gave
 * up first would turn the run's TIMEOUT into a FAILED "request failed" under load.
 */
export const PORT_TIMEOUT_GRACE_MS = 250;

/**
 * Calls `ports.http` with what is left of the run's time. The run times out when the clock has
 * passed the deadline once the call settles (the port gave up on its own timeout, or answered
 * late), or, with `ports.sleep`, as soon as the watchdog fires; the call is then aborted.
 */
export async function callWithDeadline(
  ports: RunPorts,
  deadline: number,
  request: Omit<HttpCall, 'timeoutMs' | 'signal'>,
): Promise<DeadlineAnswer> {
  const remaining = deadline - ports.now();
  if (remaining <= 0) return { kind: 'timeout' };

  const call = new AbortController();
  const watchdog = new AbortController();
  const racers: Promise<DeadlineAnswer | typeof TIMED_OUT>[] = [
    answerOf(() => ports.http({ ...request, timeoutMs: remaining + PORT_TIMEOUT_GRACE_MS, signal: call.signal })),
  ];
  if (ports.sleep !== undefined) racers.push(watch(ports, remaining, watchdog.signal));

  try {
    const answer = await Promise.race(racers);
    if (answer === TIMED_OUT || ports.now() >= deadline) {
      call.abort(new Error('run time limit reached'));
      return { kind: 'timeout' };
    }
    return answer;
  } finally {
    watchdog.abort();
  }
}

/**
 * Runs the port call and never rejects: if the watchdog wins, the call may still settle later,
 * and its outcome must not become an unhandled rejection. A port that throws synchronously
 * counts as a failed call.
 */
async function answerOf(start: () => Promise<HttpReply>): Promise<DeadlineAnswer> {
  try {
    return { kind: 'reply', reply: await start() };
  } catch (error) {
    return { kind: 'error', reason: error instanceof Error ? error.message : String(error) };
  }
}

/** Resolves TIMED_OUT when the sleep ends; a sleep that fails never fires (no watchdog then). */
async function watch(ports: RunPorts, ms: number, signal: AbortSignal): Promise<typeof TIMED_OUT> {
  try {
    await ports.sleep?.(ms, signal);
  } catch {
    return new Promise<never>(() => undefined);
  }
  return TIMED_OUT;
}
