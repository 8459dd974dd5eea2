import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Delivery ids are no longer claimed in a table of their own: a delivery's idempotency key is
 * derived from its hook and id, and the invocation service's idempotency keys, written in the
 * run's own transaction, are the dedupe (one commit per delivery instead of two). The ids
 * claimed before this migration had random keys that the invocation service cannot be asked
 * about from here: a repeat of one of them in the 24 hours after the upgrade starts a new run.
 *
 * Never edit this class once it has landed: add a new migration instead.
 */
export class DropHookDeliveries1763700000703 implements MigrationInterface {
  name = 'DropHookDeliveries1763700000703';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE hook_deliveries`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
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
}
