/**
 * Why the gateway refuses a request, in its own terms. The HTTP layer alone turns a kind into a
 * status (http/api-exception.filter.ts); the message is the spec's, word for word, because
 * clients match on it.
 */
export type DomainErrorKind =
  /** The request itself is wrong: a field, a combination of fields, a project type. */
  | 'invalid'
  /** No credential, or one that is not accepted. */
  | 'unauthenticated'
  /** A known caller that may not do this. */
  | 'forbidden'
  | 'not-found'
  /** The resource's state refuses the change (a run that is no longer scheduled, a member already added). */
  | 'conflict'
  /** Understood and allowed, but it could not be done (a replay that failed). */
  | 'unprocessable'
  | 'rate-limited'
  /** The organization's monthly quota is used up; `quota` says how far. */
  | 'quota-exceeded'
  /** It failed on our side, with a message the client can act on (retry with the same key). */
  | 'failed'
  /** Something it depends on did not answer in time: retry shortly. */
  | 'unavailable'
  /**
   * Done in part: the change is recorded, but what another service had to do next did not
   * happen now (an approval decided, its run not resumed); it happens later by itself.
   */
  | 'incomplete'
  /** A third party we called for the client (a webhook provider) refused or failed; its message says why. */
  | 'upstream-failed';

/** A quota used up: the numbers the answer shows. */
export interface QuotaUse {
  limit: number;
  used: number;
  /** ISO 8601; empty when the invocation service did not say. */
  periodStart: string;
}

/**
 * A refusal as a plain value, for outcomes that are returned rather than thrown (starting a run
 * is on the hot path, and an expected outcome should not pay for a stack trace).
 */
export interface Refusal {
  readonly kind: DomainErrorKind;
  readonly message: string;
  /** Fields the answer carries next to the message (a definition's problems). */
  readonly extra?: Readonly<Record<string, unknown>>;
  readonly quota?: QuotaUse;
}

/** A refusal thrown by a handler; carries no HTTP status. */
export class DomainError extends Error implements Refusal {
  constructor(
    readonly kind: DomainErrorKind,
    message: string,
    readonly extra?: Readonly<Record<string, unknown>>,
  ) {
    super(message);
    this.name = 'DomainError';
  }
}
