import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Flow control (DESIGN section 13; runs/flow-gate.repository.ts). Waiting runs stay here, not in
 * memory: one row per run held back, ordered per slot by rank (queued time moved by priority).
 * A concurrency slot's holders are the runs that took it; only those still RUNNING count, so a
 * run that ends, suspends or is ended by the sweeper after its lease expired gives its slot back
 * without anything else to write. A throttle keeps its GCRA arrival time.
 */
export class AddFlowControl1763700000320 implements MigrationInterface {
  name = 'AddFlowControl1763700000320';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE flow_waits (
        invocation_id uuid PRIMARY KEY,
        project_id uuid NOT NULL,
        -- The slot the run waits for, and why (concurrency, throttle, debounce, project). The runs of
        -- an open debounce burst wait for its slot ranked by minus the time they joined: the last first.
        slot text NOT NULL,
        reason text NOT NULL,
        rank bigint NOT NULL,
        -- When it may be worth trying again (a throttle's next conforming time); NULL = when a slot frees.
        retry_at timestamptz NULL,
        -- The status the run waits in (QUEUED, or SCHEDULED whose time came) and its job, for its start.
        from_status text NOT NULL,
        waiting_job text NULL,
        -- Since when it waits (through every reason), and each reason it waited for, for trace.flowControl.
        since timestamptz NOT NULL,
        reasons text[] NOT NULL DEFAULT '{}'
      )`);
    await queryRunner.query(`CREATE INDEX flow_waits_slot_idx ON flow_waits (slot, rank)`);
    await queryRunner.query(`CREATE INDEX flow_waits_reason_idx ON flow_waits (project_id, reason)`);
    await queryRunner.query(`
      CREATE TABLE flow_holders (
        slot text NOT NULL,
        invocation_id uuid NOT NULL,
        PRIMARY KEY (slot, invocation_id)
      )`);
    // The project's maxConcurrentRuns (API settings), as the gateway's ProjectApiSettingsChanged says.
    await queryRunner.query(`ALTER TABLE project_copies ADD COLUMN max_concurrent_runs integer NULL`);
    await queryRunner.query(`
      CREATE TABLE flow_throttles (
        slot text PRIMARY KEY,
        tat timestamptz NOT NULL
      )`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE flow_throttles`);
    await queryRunner.query(`ALTER TABLE project_copies DROP COLUMN max_concurrent_runs`);
    await queryRunner.query(`DROP TABLE flow_holders`);
    await queryRunner.query(`DROP TABLE flow_waits`);
  }
}
