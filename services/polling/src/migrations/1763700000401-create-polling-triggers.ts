import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The polling triggers: one row per (project, pollKey). `next_poll_at` is the due time of the
 * next poll; a replica that claims a due row sets `leased_until`/`lease_id` and leaves
 * `next_poll_at` as it is until the poll completes, so a poll whose replica died is taken up
 * again for the same due time once the lease runs out (its runs are deduplicated by idempotency
 * keys derived from that due time).
 *
 * Never edit this class once it has landed: add a new migration instead.
 */
export class CreatePollingTriggers1763700000401 implements MigrationInterface {
  name = 'CreatePollingTriggers1763700000401';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE polling_triggers (
        id uuid PRIMARY KEY,
        org_id uuid NOT NULL,
        project_id uuid NOT NULL,
        poll_key text NOT NULL,
        source text NOT NULL,
        poll_endpoint text NOT NULL,
        dedupe_field text NOT NULL,
        -- Sealed with the platform SecretBox; NULL when no Authorization header is sent.
        sealed_auth_header text NULL,
        interval_ms integer NOT NULL CHECK (interval_ms > 0),
        last_seen_value text NULL,
        last_polled_at timestamptz NULL,
        next_poll_at timestamptz NOT NULL,
        leased_until timestamptz NULL,
        lease_id uuid NULL,
        created_at timestamptz NOT NULL,
        updated_at timestamptz NOT NULL,
        CONSTRAINT polling_triggers_key UNIQUE (project_id, poll_key)
      )`);
    await queryRunner.query(`CREATE INDEX polling_triggers_due_idx ON polling_triggers (next_poll_at)`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE polling_triggers`);
  }
}
