import { isTransientDatabaseError } from '@runline/db';
import { retry } from './retry.js';

export interface TransientRetryOptions {
  /** Give up (rethrow the last error) after this long. Default 30 000 ms. */
  maxElapsedMs?: number;
  /** First wait; doubles per attempt up to 2 s. Default 50 ms. */
  baseDelayMs?: number;
  /** Called before each wait, e.g. to log. */
  onRetry?: (error: unknown, attempt: number) => void;
}

/**
 * Runs `work`, and again after a growing wait while it fails with a transient database error
 * (`isTransientDatabaseError`), for at most `maxElapsedMs`. Any other error is thrown at once.
 * `work` must be safe to repeat: a statement guarded by the state it expects (a transition
 * from RUNNING under our lease), or a read.
 */
export function retryTransient<T>(work: () => Promise<T>, options: TransientRetryOptions = {}): Promise<T> {
  return retry(() => work(), {
    baseDelayMs: options.baseDelayMs ?? 50,
    maxDelayMs: 2000,
    deadline: Date.now() + (options.maxElapsedMs ?? 30_000),
    retryable: isTransientDatabaseError,
    ...(options.onRetry ? { onRetry: options.onRetry } : {}),
  });
}
