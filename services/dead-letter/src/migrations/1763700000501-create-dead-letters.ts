import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Dead letters, one row per failure. `origin_key` identifies the failure itself (the failed run,
 * or the failed poll's event), so the same failure reported twice (a poll retried after a crash,
 * a redelivered event) is recorded once. The payload kept for replay is sealed; runs of
 * automations also keep the redacted request for display.
 *
 * Never edit this class once it has landed: add a new migration instead.
 */
export class CreateDeadLetters1763700000501 implements MigrationInterface {
  name = 'CreateDeadLetters1763700000501';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE dead_letters (
        id uuid PRIMARY KEY,
        org_id uuid NOT NULL,
        project_id uuid NOT NULL,
        origin_key text NOT NULL UNIQUE,
        source text NOT NULL,
        target_type text NOT NULL,
        trigger_key text NOT NULL,
        -- What a replay runs: the chatbot's flow or the automation's workflow.
        run_target text NOT NULL CHECK (run_target IN ('FLOW', 'AUTOMATION')),
        -- Shown instead of the opened sealed payload when set (redacted automation requests).
        display_payload jsonb NULL,
        sealed_payload text NOT NULL,
        failure_reason text NOT NULL,
        attempt_count integer NOT NULL,
        invocation_id uuid NULL,
        replayed_at timestamptz NULL,
        replay_status text NULL,
        replay_invocation_id uuid NULL,
        created_at timestamptz NOT NULL,
        updated_at timestamptz NOT NULL
      )`);
    await queryRunner.query(`CREATE INDEX dead_letters_project_idx ON dead_letters (project_id, created_at DESC, id DESC)`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE dead_letters`);
  }
}
