import { BusNoRespondersError, BusTimeoutError, BusUnavailableError, type Bus } from '@runline/bus';
import { API_ERRORS, ApiError } from './http/api-error.js';

/**
 * A request/reply call to the invocation service for an invocation route (GET and PATCH
 * /external-invocations/{id}). No answer within the deadline, or nobody listening → 503
 * `Invocation service unavailable, retry shortly`; any other bus error is unexpected (500).
 */
export async function requestInvocationService(bus: Bus, subject: string, request: Uint8Array, timeoutMs: number): Promise<Uint8Array> {
  try {
    return await bus.request(subject, request, { timeoutMs });
  } catch (error) {
    if (error instanceof BusTimeoutError || error instanceof BusNoRespondersError || error instanceof BusUnavailableError) {
      throw new ApiError(503, API_ERRORS.invocationServiceUnavailable);
    }
    throw error;
  }
}
