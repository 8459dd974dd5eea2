import { Injectable } from '@nestjs/common';
import { EVENT_TYPES, unpackPayload, type Envelope } from '@runline/contracts';
import { RunEventsFeed } from './run-events-feed.js';
import { RunHistoryClient } from './run-history.client.js';
import { endsRun, FINAL_STATUSES, statusAfter } from './run-stream-events.js';

/**
 * Waits for a run to end (`Prefer: wait=N`): it follows the run on the replica's feed, so the
 * answer goes out as soon as the final event arrives, not at a polling tick, and is made from that
 * event (what the answer needs of an ended run: its status, result or error), not from a read after
 * it, which would add a round trip to the invocation service and its database. The run is read
 * once after the feed is followed (it may have ended before; an end heard meanwhile does not wait
 * for that read) and once at the deadline (its end may have been missed on the feed), so neither
 * race loses an end.
 */
@Injectable()
export class RunEndWaiter {
  constructor(
    private readonly feed: RunEventsFeed,
    private readonly history: RunHistoryClient,
  ) {}

  /**
   * The run once it has ended, as GET answers it or (heard on the feed) its invocationId, status,
   * result and errorMessage; null when it has not ended within `timeoutMs`.
   */
  async endedWithin(orgId: string, invocationId: string, timeoutMs: number): Promise<Record<string, unknown> | null> {
    let wake: (ended: Record<string, unknown> | null) => void = () => undefined;
    const ended = new Promise<Record<string, unknown> | null>((resolve) => (wake = resolve));
    const unfollow = this.feed.followRun(invocationId, {
      onEvent: (envelope) => {
        if (endsRun(envelope.type)) wake(endedRunOf(envelope));
      },
    });
    let timer: NodeJS.Timeout | undefined;
    try {
      // An end heard while this read is under way answers at once, not once the read is back
      // (the read, overtaken, may then fail with no one to hear it).
      const read = this.finished(orgId, invocationId);
      read.catch(() => undefined);
      const first = await Promise.race([ended, read]);
      if (first) return first;
      const deadline = new Promise<'deadline'>((resolve) => (timer = setTimeout(() => resolve('deadline'), timeoutMs)));
      const heard = await Promise.race([ended, deadline]);
      if (heard !== 'deadline' && heard !== null) return heard;
      return await this.finished(orgId, invocationId);
    } finally {
      clearTimeout(timer);
      unfollow();
    }
  }

  private async finished(orgId: string, invocationId: string): Promise<Record<string, unknown> | null> {
    const invocation = await this.history.invocation(orgId, invocationId);
    return FINAL_STATUSES.has(invocation.status as string) ? invocation : null;
  }
}

/** What the answer to an ended run needs, from its final event; null when the event cannot be read (the run is read instead). */
export function endedRunOf(envelope: Envelope): Record<string, unknown> | null {
  const status = statusAfter(envelope.type);
  if (status === undefined) return null;
  try {
    const { payload } = unpackPayload(envelope) as { payload: { resultJson?: string; errorMessage?: string } };
    const result = envelope.type === EVENT_TYPES.INVOCATION_SUCCEEDED && payload.resultJson ? (JSON.parse(payload.resultJson) as unknown) : null;
    return { invocationId: envelope.invocationId, status, result, errorMessage: payload.errorMessage ?? null };
  } catch {
    return null;
  }
}
