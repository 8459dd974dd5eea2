import type { DeliveryStatus } from './callback-deliveries.repository.js';

/**
 * The callback delivery rules, the only place they are decided: a receiver has 10 seconds to
 * acknowledge an attempt, and a delivery gets 3 attempts in all, with waits of 0.5 s then 1 s
 * between them. Fixed, not configurable: receivers rely on them.
 */
export const ACK_WINDOW_MS = 10_000;
/** Wait before attempt n + 2 (index n): after attempt 1, then after attempt 2. */
export const RETRY_WAITS_MS: readonly number[] = [500, 1000];
export const MAX_ATTEMPTS = RETRY_WAITS_MS.length + 1;

/** The wait after failed attempt `attempt` (1-based), or null when it was the last. */
export function waitAfter(attempt: number): number | null {
  return attempt < MAX_ATTEMPTS ? RETRY_WAITS_MS[attempt - 1]! : null;
}

/**
 * What a delivery becomes once attempt `attempt` (1-based) ended at `endedAt` (epoch ms):
 * DELIVERED when it was acknowledged, FAILED after the last attempt, else PENDING until its
 * next attempt. The wait runs from the end of the attempt, so the gap the receiver sees is
 * never shorter than the rule.
 */
export function afterAttempt(attempt: number, acknowledged: boolean, endedAt: number): { status: DeliveryStatus; nextAttemptAt: Date | null } {
  if (acknowledged) return { status: 'DELIVERED', nextAttemptAt: null };
  const wait = waitAfter(attempt);
  return wait === null ? { status: 'FAILED', nextAttemptAt: null } : { status: 'PENDING', nextAttemptAt: new Date(endedAt + wait) };
}
