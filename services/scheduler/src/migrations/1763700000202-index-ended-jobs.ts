import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Ended jobs (FIRED, CANCELLED) by the time they ended, for the pruner (`JobPruner`), which
 * deletes them after SCHEDULER_RETENTION_DAYS oldest first.
 *
 * Never edit this class once it has landed: add a new migration instead.
 */
export class IndexEndedJobs1763700000202 implements MigrationInterface {
  name = 'IndexEndedJobs1763700000202';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`CREATE INDEX scheduled_jobs_ended_idx ON scheduled_jobs (updated_at) WHERE status <> 'SCHEDULED'`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX scheduled_jobs_ended_idx`);
  }
}
