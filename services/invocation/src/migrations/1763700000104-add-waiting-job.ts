import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Runs that wait for a time (SCHEDULED, a retry's backoff, a Wait node) wait for one scheduler
 * job: `waiting_job` names it, so a fired job acts only on the run that still waits for that
 * very job (a late or repeated one changes nothing). Due retries are dispatched by the
 * scheduler now, so the sweeper's index on `run_after` goes.
 */
export class AddWaitingJob1763700000104 implements MigrationInterface {
  name = 'AddWaitingJob1763700000104';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE invocations ADD COLUMN waiting_job text NULL`);
    await queryRunner.query(`DROP INDEX IF EXISTS invocations_due_idx`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`CREATE INDEX invocations_due_idx ON invocations (run_after) WHERE status = 'QUEUED' AND run_after IS NOT NULL`);
    await queryRunner.query(`ALTER TABLE invocations DROP COLUMN waiting_job`);
  }
}
