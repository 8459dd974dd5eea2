import { Inject, Injectable, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import type { Logger } from '@runline/observability';
import { LOGGER } from '@runline/runtime';
import { ApiTokenRepository } from '../store/api-token.repository.js';

const FLUSH_INTERVAL_MS = 5000;

/**
 * Keeps each token's last use in memory and writes them in one statement every few seconds,
 * so an API call never waits on (or pays for) a database write. Lists merge in what has not
 * been written yet; shutdown writes the rest.
 */
@Injectable()
export class TokenUsageRecorder implements OnModuleInit, OnApplicationShutdown {
  private pending = new Map<string, Date>();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly apiTokens: ApiTokenRepository,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  onModuleInit(): void {
    this.timer = setInterval(() => void this.flush(), FLUSH_INTERVAL_MS);
    this.timer.unref();
  }

  async onApplicationShutdown(): Promise<void> {
    clearInterval(this.timer);
    await this.flush();
  }

  recordUse(tokenId: string, at = new Date()): void {
    this.pending.set(tokenId, at);
  }

  /** The last use not yet written, if any. */
  pendingUse(tokenId: string): Date | undefined {
    return this.pending.get(tokenId);
  }

  async flush(): Promise<void> {
    if (this.pending.size === 0) return;
    const batch = this.pending;
    this.pending = new Map();
    try {
      await this.apiTokens.recordLastUses(batch);
    } catch (error) {
      // Keep what failed for the next flush, unless a newer use has replaced it.
      for (const [id, at] of batch) if (!this.pending.has(id)) this.pending.set(id, at);
      this.logger.warn({ err: error }, 'could not record token use; will retry');
    }
  }
}
