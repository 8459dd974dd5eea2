import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Request counts of the per-token rate limits, shared by every gateway replica: one row per
 * token, endpoint, window length and window (its index since the epoch), raised by an atomic
 * upsert that never goes past the limit. UNLOGGED: no WAL, so a counter write never waits for
 * a disk flush; after a database crash the table comes back empty, which only forgives the
 * current windows.
 */
export class CreateRateLimitCounters1763700000010 implements MigrationInterface {
  name = 'CreateRateLimitCounters1763700000010';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE UNLOGGED TABLE rate_limit_counters (
        token_id uuid NOT NULL,
        endpoint text NOT NULL,
        window_ms integer NOT NULL,
        window_index bigint NOT NULL,
        -- Places handed out in the window (1, 2, …); never above the limit.
        count integer NOT NULL,
        -- The limit and the block of places of the last grant (see RateLimitCounters).
        lim integer NOT NULL,
        last_grant integer NOT NULL,
        PRIMARY KEY (token_id, endpoint, window_ms, window_index)
      )`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE rate_limit_counters`);
  }
}
