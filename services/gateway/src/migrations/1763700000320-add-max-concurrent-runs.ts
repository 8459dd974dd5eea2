import type { MigrationInterface, QueryRunner } from 'typeorm';

/** A project's `maxConcurrentRuns` (API settings; DESIGN section 13): RUNNING runs at once, every target together; NULL = no limit. */
export class AddMaxConcurrentRuns1763700000320 implements MigrationInterface {
  name = 'AddMaxConcurrentRuns1763700000320';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE project_api_settings ADD COLUMN max_concurrent_runs integer NULL`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE project_api_settings DROP COLUMN max_concurrent_runs`);
  }
}
