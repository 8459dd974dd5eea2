import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The messages of one bot session take turns across replicas (`runs/bot-sessions.ts`): the
 * session row records who holds the turn and until when (a lease, renewed while the turn runs).
 * A turn may begin before the session has any state (its first message claims a row whose
 * `sealed_state` is NULL, revision 0); its save writes the state and gives the turn back.
 */
export class AddBotSessionTurns1763700000180 implements MigrationInterface {
  name = 'AddBotSessionTurns1763700000180';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      ALTER TABLE bot_sessions
        ALTER COLUMN sealed_state DROP NOT NULL,
        ADD COLUMN turn_holder text NULL,
        ADD COLUMN turn_expires_at timestamptz NULL`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DELETE FROM bot_sessions WHERE sealed_state IS NULL`);
    await queryRunner.query(`
      ALTER TABLE bot_sessions
        DROP COLUMN turn_expires_at,
        DROP COLUMN turn_holder,
        ALTER COLUMN sealed_state SET NOT NULL`);
  }
}
