import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * What a trigger's polled items run: the chatbot's flow (`FLOW`) or the automation's workflow
 * (`AUTOMATION`). Triggers registered before this column existed came from chatbot projects
 * only (the token route is chatbot-only), hence the default.
 *
 * Never edit this class once it has landed: add a new migration instead.
 */
export class AddTriggerRunTarget1763700000420 implements MigrationInterface {
  name = 'AddTriggerRunTarget1763700000420';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE polling_triggers ADD COLUMN run_target text NOT NULL DEFAULT 'FLOW' CHECK (run_target IN ('FLOW', 'AUTOMATION'))`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE polling_triggers DROP COLUMN run_target`);
  }
}
