import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Inbound hooks and the delivery ids they have seen.
 *
 * A hook's secret is stored sealed (SecretBox), never in clear. A delivery id maps to the
 * idempotency key its run is started with (`delivery_key`); the row is reused for 24 hours from
 * its first arrival and replaced after, which is the dedupe window of X-Runline-Delivery.
 *
 * Never edit this class once it has landed: add a new migration instead.
 */
export class CreateInboundHooks1763700000701 implements MigrationInterface {
  name = 'CreateInboundHooks1763700000701';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE inbound_hooks (
        id uuid PRIMARY KEY,
        org_id uuid NOT NULL,
        project_id uuid NOT NULL,
        name text NOT NULL,
        sealed_secret text NOT NULL,
        status text NOT NULL CHECK (status IN ('ACTIVE', 'REVOKED')),
        rate_limit_per_minute integer NOT NULL,
        created_at timestamptz NOT NULL,
        revoked_at timestamptz NULL
      )`);
    await queryRunner.query(`CREATE INDEX inbound_hooks_project_idx ON inbound_hooks (project_id, created_at DESC, id DESC)`);
    await queryRunner.query(`
      CREATE TABLE hook_deliveries (
        hook_id uuid NOT NULL,
        delivery_id text NOT NULL,
        delivery_key uuid NOT NULL,
        first_seen_at timestamptz NOT NULL,
        PRIMARY KEY (hook_id, delivery_id)
      )`);
    await queryRunner.query(`CREATE INDEX hook_deliveries_first_seen_idx ON hook_deliveries (first_seen_at)`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE hook_deliveries`);
    await queryRunner.query(`DROP TABLE inbound_hooks`);
  }
}
