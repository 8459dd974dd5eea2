import { BusNoRespondersError, BusTimeoutError, BusUnavailableError, type Bus } from '@runline/bus';
import { ApiError } from '../api-error.js';

/** Our message (the spec has none): the polling or dead-letter service did not answer in time. */
export const SERVICE_UNAVAILABLE = {
  polling: 'Polling service unavailable, retry shortly',
  deadLetter: 'Dead-letter service unavailable, retry shortly',
} as const;

/** A request/reply call to the polling or dead-letter service; no answer → 503 with `unavailable`. */
export async function requestService(bus: Bus, subject: string, request: Uint8Array, timeoutMs: number, unavailable: string): Promise<Uint8Array> {
  try {
    return await bus.request(subject, request, { timeoutMs });
  } catch (error) {
    if (error instanceof BusTimeoutError || error instanceof BusNoRespondersError || error instanceof BusUnavailableError) throw new ApiError(503, unavailable);
    throw error;
  }
}
