import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';

/** Places asked for in one counter's current window. */
export interface PlacesAsked {
  tokenId: string;
  endpoint: string;
  windowMs: number;
  limit: number;
  /** How many places to take (never more than the limit lets through). */
  block: number;
}

/** What the counter holds after the ask: `lastGrant` places were taken, ending at `count`. */
export interface PlacesGranted {
  tokenId: string;
  endpoint: string;
  windowMs: number;
  windowIndex: number;
  count: number;
  lastGrant: number;
  /** The database's clock, epoch ms: windows are cut on it, which every replica shares. */
  nowMs: number;
}

/** The shared rate-limit counters: one row per token, endpoint and window. */
@Injectable()
export class RateLimitCounterRepository {
  constructor(private readonly dataSource: DataSource) {}

  /**
   * Takes places in each counter's current window in one atomic upsert, which never hands out
   * more than the limit, whatever other replicas take at the same time.
   */
  async take(asks: readonly PlacesAsked[]): Promise<PlacesGranted[]> {
    const rows: Array<{ token_id: string; endpoint: string; window_ms: number; window_index: string; count: number; last_grant: number; now_ms: string }> =
      await this.dataSource.query(
        `WITH clock AS (SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint AS ms)
         INSERT INTO rate_limit_counters AS c (token_id, endpoint, window_ms, window_index, count, lim, last_grant)
         SELECT u.token_id, u.endpoint, u.window_ms, clock.ms / u.window_ms, LEAST(u.block, u.lim), u.lim, LEAST(u.block, u.lim)
           FROM unnest($1::uuid[], $2::text[], $3::int[], $4::int[], $5::int[]) AS u(token_id, endpoint, window_ms, lim, block), clock
         ON CONFLICT (token_id, endpoint, window_ms, window_index) DO UPDATE SET
           last_grant = LEAST(EXCLUDED.last_grant, GREATEST(0, EXCLUDED.lim - c.count)),
           count = c.count + LEAST(EXCLUDED.last_grant, GREATEST(0, EXCLUDED.lim - c.count)),
           lim = EXCLUDED.lim
         RETURNING c.token_id, c.endpoint, c.window_ms, c.window_index, c.count, c.last_grant, (SELECT ms FROM clock) AS now_ms`,
        [
          asks.map((ask) => ask.tokenId),
          asks.map((ask) => ask.endpoint),
          asks.map((ask) => ask.windowMs),
          asks.map((ask) => ask.limit),
          asks.map((ask) => ask.block),
        ],
      );
    return rows.map((row) => ({
      tokenId: row.token_id,
      endpoint: row.endpoint,
      windowMs: row.window_ms,
      windowIndex: Number(row.window_index),
      count: row.count,
      lastGrant: row.last_grant,
      nowMs: Number(row.now_ms),
    }));
  }

  /** Drops windows that ended more than a minute ago (on the database's clock). */
  async deleteEnded(): Promise<void> {
    await this.dataSource.query(
      `DELETE FROM rate_limit_counters WHERE (window_index + 1) * window_ms < (extract(epoch FROM clock_timestamp()) * 1000)::bigint - 60000`,
    );
  }
}
