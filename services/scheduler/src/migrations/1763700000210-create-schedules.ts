import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The Schedule triggers of published automations (DESIGN.md section 12) and their fires.
 *
 * `schedule_projects`: the latest publish applied per project.
 *
 * `schedules`: one row per published schedule of a project, replaced by each publish (an
 * unchanged schedule keeps its row, anchor and times; a changed one starts afresh; a removed one
 * is deleted). `due_at` is when the row must next be looked at by a firing pass: its next fire
 * (nominal time plus jitter) or, while a BUFFER_ONE fire waits, the next check of the running
 * run. Paused is state, not definition: a publish never changes it.
 *
 * `schedule_fires`: one row per fire (project, schedule, nominal time), for good until pruned.
 * The primary key is what makes a fire start at most one run across replicas, restarts and
 * publishes. PENDING rows (backfills, a BUFFER_ONE fire released) are started by the firing
 * pass at `due_at`.
 *
 * Never edit this class once it has landed: add a new migration instead.
 */
export class CreateSchedules1763700000210 implements MigrationInterface {
  name = 'CreateSchedules1763700000210';

  async up(queryRunner: QueryRunner): Promise<void> {
    // The latest publish applied per project: a publish arrives twice (handed over, then from
    // JetStream) and possibly out of order; only a newer one changes the schedules. Deleted
    // projects stay deleted.
    await queryRunner.query(`
      CREATE TABLE schedule_projects (
        project_id uuid PRIMARY KEY,
        org_id uuid NOT NULL,
        published_version integer NOT NULL DEFAULT 0,
        config_version bigint NOT NULL DEFAULT 0,
        deleted boolean NOT NULL DEFAULT false,
        updated_at timestamptz NOT NULL
      )`);
    await queryRunner.query(`
      CREATE TABLE schedules (
        project_id uuid NOT NULL,
        schedule_id text NOT NULL,
        org_id uuid NOT NULL,
        -- Place in the definition's list, so the console lists them in definition order.
        position integer NOT NULL,
        -- The normalized ScheduleDefinition (@runline/engine) and its fingerprint.
        definition jsonb NOT NULL,
        fingerprint text NOT NULL,
        -- When this form of the schedule came into force: the publish that first had this fingerprint.
        anchor_at timestamptz NOT NULL,
        published_version integer NOT NULL,
        -- The project's configuration version of that publish, sent with every start.
        config_version bigint NOT NULL,
        paused boolean NOT NULL DEFAULT false,
        -- The next nominal fire time (before jitter), null when the schedule fires no more.
        next_fire_at timestamptz NULL,
        due_at timestamptz NULL,
        skipped_count bigint NOT NULL DEFAULT 0,
        -- BUFFER_ONE: the nominal time of the one fire waiting for the running run to end.
        buffered_fire_at timestamptz NULL,
        -- The latest started fire and its run's status as last heard: the console's lastFire, and
        -- overlap's "previous run" while that status is not final.
        last_fire_at timestamptz NULL,
        last_invocation_id uuid NULL,
        last_status text NULL,
        created_at timestamptz NOT NULL,
        updated_at timestamptz NOT NULL,
        PRIMARY KEY (project_id, schedule_id)
      )`);
    await queryRunner.query(`CREATE INDEX schedules_due_idx ON schedules (due_at) WHERE due_at IS NOT NULL`);
    await queryRunner.query(`CREATE INDEX schedules_last_run_idx ON schedules (last_invocation_id) WHERE last_invocation_id IS NOT NULL`);
    await queryRunner.query(`
      CREATE TABLE schedule_fires (
        project_id uuid NOT NULL,
        schedule_id text NOT NULL,
        scheduled_time timestamptz NOT NULL,
        org_id uuid NOT NULL,
        kind text NOT NULL CHECK (kind IN ('SCHEDULED', 'CATCH_UP', 'TRIGGER', 'BACKFILL', 'BUFFERED')),
        status text NOT NULL CHECK (status IN ('PENDING', 'STARTED', 'SKIPPED', 'NOT_STARTED')),
        due_at timestamptz NOT NULL,
        invocation_id uuid NULL,
        run_status text NULL,
        reason text NULL,
        created_at timestamptz NOT NULL,
        started_at timestamptz NULL,
        PRIMARY KEY (project_id, schedule_id, scheduled_time)
      )`);
    await queryRunner.query(`CREATE INDEX schedule_fires_pending_idx ON schedule_fires (due_at) WHERE status = 'PENDING'`);
    await queryRunner.query(`CREATE INDEX schedule_fires_invocation_idx ON schedule_fires (invocation_id) WHERE invocation_id IS NOT NULL`);
    await queryRunner.query(`CREATE INDEX schedule_fires_created_idx ON schedule_fires (created_at)`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE schedule_fires`);
    await queryRunner.query(`DROP TABLE schedules`);
    await queryRunner.query(`DROP TABLE schedule_projects`);
  }
}
