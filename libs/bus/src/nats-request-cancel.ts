/**
 * A fix for a cost inside nats.js 3.x (3.3.0 here; 3.4.0 is the same): every request that got
 * its reply (every JetStream publish waits for one: its acknowledgement) ends with
 * `RequestOne.cancel()`, which builds `new RequestError("cancelled")` (a captured stack trace)
 * only to reject a promise that is already settled. `noAsyncTraces` does not reach it. It was
 * 2.4% of the callback service's CPU and 2.7% of the invocation service's (bench/README.md
 * "Session 13").
 *
 * `cancel()` without an error is called only after the request's promise has settled (its
 * reply arrived, or its deadline passed and the race returned the timeout), so its rejection
 * reason is never seen: one shared error does what a new one did. A cancel with an error (a
 * failed publish, a closed connection) is untouched.
 */
import { RequestError, RequestOne } from '@nats-io/nats-core/internal';

/** The reason a settled request is "cancelled" with: never observed, so never rebuilt. */
export const SETTLED_REQUEST_CANCELLED = new RequestError('cancelled');

const cancel = RequestOne.prototype.cancel;

RequestOne.prototype.cancel = function cancelWithoutNewError(this: RequestOne, err?: Error): void {
  cancel.call(this, err ?? SETTLED_REQUEST_CANCELLED);
};
