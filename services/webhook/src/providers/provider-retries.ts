import { retry, SYSTEM_RETRY_CLOCK, type RetryClock } from '@runline/runtime';
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

/** Tries shorter than this are not worth starting: the budget is spent. */
const MIN_ATTEMPT_MS = 200;

/**
 * Runs `call` until it succeeds, fails with a provider's "no" (a ProviderError that is not
 * retryable, or any other error), or the tries or the budget run out; then the last error is
 * thrown, with the provider's own message. Between tries it waits the provider's Retry-After
 * when it sent one, else an exponential backoff. A wait that would leave no time for a try
 * before the deadline is not started: the provider's last answer stands.
 */
export function withProviderRetries<T>(call: (timeoutMs: number) => Promise<T>, policy: RetryPolicy, clock: RetryClock = SYSTEM_RETRY_CLOCK): Promise<T> {
  return retry(
    async () => {
      const left = policy.deadline - clock.now();
      if (left < MIN_ATTEMPT_MS) throw new ProviderError('The provider did not answer in time', true);
      return call(Math.min(policy.attemptTimeoutMs, left));
    },
    {
      maxAttempts: policy.maxAttempts,
      baseDelayMs: policy.baseBackoffMs,
      jitter: 0.2,
      deadline: policy.deadline - MIN_ATTEMPT_MS,
      retryable: (error) => error instanceof ProviderError && error.retryable,
      requestedDelayMs: (error) => (error instanceof ProviderError ? error.retryAfterMs : null),
      clock,
    },
  );
}
