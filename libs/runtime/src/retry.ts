import pRetry from 'p-retry';

/** Where `retry` reads the time and waits; a test passes one that only moves when told. */
export interface RetryClock {
  now(): number;
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

export const SYSTEM_RETRY_CLOCK: RetryClock = {
  now: () => Date.now(),
  // The global setTimeout rather than timers/promises: a test's fake timers then drive it.
  sleep: (ms, signal) =>
    new Promise((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason);
      const onAbort = () => {
        clearTimeout(timer);
        reject(signal!.reason);
      };
      const timer = setTimeout(() => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      }, ms);
      signal?.addEventListener('abort', onAbort, { once: true });
    }),
};

export interface RetryOptions {
  /** Tries at most, the first included. Default: as many as the deadline allows. */
  maxAttempts?: number;
  /** The wait before the second try. */
  baseDelayMs: number;
  /** Each further wait is the one before times this. Default 2; 1 waits the same each time. */
  factor?: number;
  /** No backoff wait is longer than this. Default: no cap. */
  maxDelayMs?: number;
  /**
   * Up to this share of a backoff wait is added at random (0.2: up to 20 % longer), so callers
   * that failed together do not come back together. Default 0.
   */
  jitter?: number;
  /** No wait is started that would end after this moment (`clock.now()` ms): the last error stands. */
  deadline?: number;
  /** Whether an error is worth another try; any other is thrown at once. Default: every error. */
  retryable?: (error: Error) => boolean;
  /** The wait the other side asked for (its Retry-After), taken instead of the backoff; null: none. */
  requestedDelayMs?: (error: Error) => number | null | undefined;
  /** Called before each wait, e.g. to log. */
  onRetry?: (error: Error, attempt: number, delayMs: number) => void;
  /** Ends the wait under way and the retries: the promise rejects with the signal's reason. */
  signal?: AbortSignal;
  clock?: RetryClock;
}

/**
 * Runs `work` (given the 1-based try number) until it succeeds, throws an error that is not
 * retryable, or the tries or the deadline run out; then the last error is thrown as it was.
 * Between tries it waits what the other side asked for, else an exponential backoff.
 *
 * p-retry runs the tries. From it: a TypeError other than a network failure is a bug and never
 * retried, and a thrown value that is not an Error comes back as a TypeError.
 */
export function retry<T>(work: (attempt: number) => Promise<T>, options: RetryOptions): Promise<T> {
  const clock = options.clock ?? SYSTEM_RETRY_CLOCK;
  return pRetry(work, {
    retries: (options.maxAttempts ?? Infinity) - 1,
    // p-retry's own delay cannot come from the error (a Retry-After), so it is off and the
    // wait happens here, once the retry is decided.
    minTimeout: 0,
    signal: options.signal,
    shouldRetry: async ({ error, attemptNumber }) => {
      if (options.retryable && !options.retryable(error)) return false;
      const delayMs = options.requestedDelayMs?.(error) ?? backoffMs(options, attemptNumber);
      if (options.deadline !== undefined && clock.now() + delayMs > options.deadline) return false;
      options.onRetry?.(error, attemptNumber, delayMs);
      if (delayMs > 0) await clock.sleep(delayMs, options.signal);
      return true;
    },
  });
}

/** The backoff wait after failed try `attempt` (1-based): exponential, capped, plus jitter. */
export function backoffMs(options: Pick<RetryOptions, 'baseDelayMs' | 'factor' | 'maxDelayMs' | 'jitter'>, attempt: number): number {
  const wait = Math.min(options.baseDelayMs * (options.factor ?? 2) ** (attempt - 1), options.maxDelayMs ?? Infinity);
  return options.jitter ? wait + Math.floor(Math.random() * wait * options.jitter) : wait;
}
