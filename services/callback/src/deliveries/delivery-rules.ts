/**
 * The spec's delivery rules (Limits: "Callback acknowledgement window 10 seconds", "Callback
 * attempts 3 in total, with waits of 0.5 s then 1 s"). Fixed: receivers rely on them.
 */
export const ACK_WINDOW_MS = 10_000;
/** Wait before attempt n + 2 (index n): after attempt 1, then after attempt 2. */
export const RETRY_WAITS_MS: readonly number[] = [500, 1000];
export const MAX_ATTEMPTS = RETRY_WAITS_MS.length + 1;

/** The wait after failed attempt `attempt` (1-based), or null when it was the last. */
export function waitAfter(attempt: number): number | null {
  return attempt < MAX_ATTEMPTS ? RETRY_WAITS_MS[attempt - 1]! : null;
}
