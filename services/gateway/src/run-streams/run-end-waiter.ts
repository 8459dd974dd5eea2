import { Injectable } from '@nestjs/common';
import { RunEventsFeed } from './run-events-feed.js';
import { RunHistoryClient } from './run-history.client.js';
import { endsRun, FINAL_STATUSES } from './run-stream-events.js';

/**
 * Waits for a run to end (`Prefer: wait=N`): it follows the run on the replica's feed, so the
 * answer goes out as soon as the final event arrives, not at a polling tick. The run is read
 * once after the feed is followed (it may have ended before) and once at the deadline (its end
 * may have been missed on the feed), so neither race loses an end.
 */
@Injectable()
export class RunEndWaiter {
  constructor(
    private readonly feed: RunEventsFeed,
    private readonly history: RunHistoryClient,
  ) {}

  /** The run as GET answers it once it has ended, or null when it has not ended within `timeoutMs`. */
  async endedWithin(orgId: string, invocationId: string, timeoutMs: number): Promise<Record<string, unknown> | null> {
    let wake: () => void = () => undefined;
    const ended = new Promise<'ended'>((resolve) => (wake = () => resolve('ended')));
    const unfollow = this.feed.followRun(invocationId, {
      onEvent: (envelope) => {
        if (endsRun(envelope.type)) wake();
      },
    });
    let timer: NodeJS.Timeout | undefined;
    try {
      const now = await this.finished(orgId, invocationId);
      if (now) return now;
      const deadline = new Promise<'deadline'>((resolve) => (timer = setTimeout(() => resolve('deadline'), timeoutMs)));
      await Promise.race([ended, deadline]);
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
