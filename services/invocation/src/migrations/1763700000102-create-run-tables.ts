import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The write side of runs: one row per invocation (its state machine and what it needs to run),
 * the event store every read-model change comes from, idempotency keys, ONE_TIME enrollments
 * and bot sessions.
 */
export class CreateRunTables1763700000102 implements MigrationInterface {
  name = 'CreateRunTables1763700000102';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE invocations (
        id uuid PRIMARY KEY,
        org_id uuid NOT NULL,
        project_id uuid NOT NULL,
        target_type text NOT NULL,
        mode text NOT NULL,
        status text NOT NULL,
        -- Attempts made so far, and the most the run may make (async automations retry).
        attempt integer NOT NULL DEFAULT 0,
        max_attempts integer NOT NULL DEFAULT 1,
        -- A QUEUED run with run_after set waits for it (retry backoff); NULL = dispatched.
        run_after timestamptz NULL,
        -- A RUNNING run belongs to lease_owner until lease_expires_at; an expired lease means
        -- the process running it died, and the run is ended as interrupted.
        lease_owner text NULL,
        lease_expires_at timestamptz NULL,
        -- Sequence number of the last event appended (optimistic concurrency).
        sequence integer NOT NULL,
        -- The run plan (payload, policies, callback…) as JSON sealed with the SecretBox: it holds
        -- the request unredacted, so it is never stored in clear.
        sealed_plan text NOT NULL,
        -- Where a SUSPENDED run stopped (vars, steps, suspension), sealed like the plan.
        sealed_resume_state text NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(`CREATE INDEX invocations_due_idx ON invocations (run_after) WHERE status = 'QUEUED' AND run_after IS NOT NULL`);
    await queryRunner.query(`CREATE INDEX invocations_lease_idx ON invocations (lease_expires_at) WHERE status = 'RUNNING'`);
    await queryRunner.query(`
      CREATE TABLE invocation_events (
        invocation_id uuid NOT NULL,
        sequence integer NOT NULL,
        id uuid NOT NULL,
        type text NOT NULL,
        occurred_at timestamptz NOT NULL,
        data jsonb NOT NULL,
        PRIMARY KEY (invocation_id, sequence)
      )`);
    await queryRunner.query(`
      CREATE TABLE idempotency_keys (
        project_id uuid NOT NULL,
        target_type text NOT NULL,
        mode text NOT NULL,
        key text NOT NULL,
        invocation_id uuid NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (project_id, target_type, mode, key)
      )`);
    await queryRunner.query(`
      CREATE TABLE enrollments (
        project_id uuid NOT NULL,
        subject text NOT NULL,
        invocation_id uuid NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (project_id, subject)
      )`);
    await queryRunner.query(`
      CREATE TABLE bot_sessions (
        project_id uuid NOT NULL,
        session_id text NOT NULL,
        -- { version, vars, waitingAt: { nodeId, saveAs } | null } as JSON sealed with the
        -- SecretBox: variables may hold whatever the conversation or an http node returned.
        sealed_state text NOT NULL,
        revision integer NOT NULL DEFAULT 1,
        updated_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (project_id, session_id)
      )`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE bot_sessions`);
    await queryRunner.query(`DROP TABLE enrollments`);
    await queryRunner.query(`DROP TABLE idempotency_keys`);
    await queryRunner.query(`DROP TABLE invocation_events`);
    await queryRunner.query(`DROP TABLE invocations`);
  }
}
