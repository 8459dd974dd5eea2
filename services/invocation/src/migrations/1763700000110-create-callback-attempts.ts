import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The callback attempts of each run, from the callback service's CallbackAttempted events:
 * what the read model's `callbackAttempts` is folded from (with the run's own events), and the
 * record that an event was applied (its key), so a redelivered event changes nothing.
 *
 * Never edit this class once it has landed: add a new migration instead.
 */
export class CreateCallbackAttempts1763700000110 implements MigrationInterface {
  name = 'CreateCallbackAttempts1763700000110';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE callback_attempts (
        invocation_id uuid NOT NULL,
        webhook_id text NOT NULL,
        attempt integer NOT NULL,
        -- The read model's entry (CallbackAttemptEntry), as folded into the document.
        entry jsonb NOT NULL,
        recorded_at timestamptz NOT NULL,
        PRIMARY KEY (invocation_id, webhook_id, attempt)
      )`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE callback_attempts`);
  }
}
