import { ProviderError } from './provider-adapter.js';

/** How a provider call is retried (WEBHOOK_PROVIDER_* configuration). */
export interface RetryPolicy {
  /** Tries at most, the first included. */
  maxAttempts: number;
  /** Wait before the second try; doubled for each further one (with up to 20 % jitter). */
  baseBackoffMs: number;
  /** Time limit of one try, in ms. */
  attemptTimeoutMs: number;
  /** No try starts, and no wait reaches, past this moment (epoch ms): the caller's budget. */
  deadline: number;
}

export interface RetryClock {
  now(): number;
  sleep(ms: number): Promise<void>;
}

export const SYSTEM_CLOCK: RetryClock = {
  now: () => Date.now(),
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
};

/** Tries shorter than this are not worth starting: the budget is spent. */
const MIN_ATTEMPT_MS = 200;

/**
 * Runs `call` until it succeeds, fails with a provider's "no" (a ProviderError that is not
 * retryable, or any other error), or the tries or the budget run out; then the last error is
 * thrown, with the provider's own message. Between tries it waits the provider's Retry-After
 * when it sent one, else an exponential backoff. A wait that would end past the deadline is not
 * started: the provider's last answer stands.
 */
export async function withProviderRetries<T>(call: (timeoutMs: number) => Promise<T>, policy: RetryPolicy, clock: RetryClock = SYSTEM_CLOCK): Promise<T> {
  for (let attempt = 1; ; attempt += 1) {
    const left = policy.deadline - clock.now();
    if (left < MIN_ATTEMPT_MS) throw new ProviderError('The provider did not answer in time', true);
    try {
      return await call(Math.min(policy.attemptTimeoutMs, left));
    } catch (error) {
      if (!(error instanceof ProviderError) || !error.retryable || attempt >= policy.maxAttempts) throw error;
      const backoff = policy.baseBackoffMs * 2 ** (attempt - 1);
      const wait = error.retryAfterMs ?? backoff + Math.floor(Math.random() * backoff * 0.2);
      if (clock.now() + wait + MIN_ATTEMPT_MS > policy.deadline) throw error;
      await clock.sleep(wait);
    }
  }
}
