import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Fired scheduler jobs take the fair start order too (DESIGN section 13; runs/fair-starts.ts): a
 * SCHEDULED run whose time came, a retry, a resumed Wait. Such a queued start remembers what it
 * expects of its run: the status it waits in (`expected_status`; QUEUED for the runs queued
 * by their RunInvocation command, as every row before this column), the job it waits for
 * (`waiting_job`, null for a RunInvocation) and the job's due time (`due_at`: the scheduler fires
 * a little early, and the run is taken only once that time came; null: at once).
 */
export class AddStartQueueExpectations1763700000331 implements MigrationInterface {
  name = 'AddStartQueueExpectations1763700000331';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      ALTER TABLE start_queue
        ADD COLUMN expected_status text NOT NULL DEFAULT 'QUEUED',
        ADD COLUMN waiting_job text NULL,
        ADD COLUMN due_at timestamptz NULL`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE start_queue DROP COLUMN due_at, DROP COLUMN waiting_job, DROP COLUMN expected_status`);
  }
}
