import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The scheduler's jobs: one row per job name, for good. A job is SCHEDULED until it FIRES or is
 * CANCELLED, and never leaves those two states, so a late or redelivered ScheduleJob (ON CONFLICT
 * DO NOTHING) can never bring it back. A job cancelled before its ScheduleJob arrived is a
 * tombstone: CANCELLED with no due time.
 *
 * Never edit this class once it has landed: add a new migration instead.
 */
export class CreateScheduledJobs1763700000201 implements MigrationInterface {
  name = 'CreateScheduledJobs1763700000201';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE scheduled_jobs (
        name text PRIMARY KEY,
        kind text NOT NULL CHECK (kind IN ('START_RUN', 'RESUME_RUN', 'RETRY_RUN')),
        -- The run the job belongs to, carried to the events about it.
        invocation_id uuid NOT NULL,
        org_id uuid NOT NULL,
        project_id uuid NOT NULL,
        due_at timestamptz NULL,
        status text NOT NULL CHECK (status IN ('SCHEDULED', 'FIRED', 'CANCELLED')),
        -- The ScheduleJob's message chain, continued by the events about the job.
        correlation_id text NULL,
        causation_id text NULL,
        traceparent text NULL,
        created_at timestamptz NOT NULL,
        updated_at timestamptz NOT NULL,
        fired_at timestamptz NULL,
        cancelled_at timestamptz NULL,
        CONSTRAINT scheduled_jobs_due_check CHECK (status <> 'SCHEDULED' OR due_at IS NOT NULL),
        CONSTRAINT scheduled_jobs_fired_check CHECK ((status = 'FIRED') = (fired_at IS NOT NULL)),
        CONSTRAINT scheduled_jobs_cancelled_check CHECK ((status = 'CANCELLED') = (cancelled_at IS NOT NULL))
      )`);
    // Only waiting jobs are looked up by time (the claim and the timer's "what comes next"), so
    // the index stays as small as the set of waiting jobs however many have fired.
    await queryRunner.query(`CREATE INDEX scheduled_jobs_due_idx ON scheduled_jobs (due_at) WHERE status = 'SCHEDULED'`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE scheduled_jobs`);
  }
}
