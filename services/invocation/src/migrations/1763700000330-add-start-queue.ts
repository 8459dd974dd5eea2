import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The fair start queue (DESIGN section 13, fairness between projects; runs/fair-starts.ts):
 * QUEUED runs that arrived while every run slot of the process was taken wait here, not on the
 * bus, and start in the order of `tag` (each project's runs numbered from the smallest tag
 * waiting, so projects take turns). `picked_until`: a replica took the run to start it; past
 * that time (the replica died) any replica may take it again.
 */
export class AddStartQueue1763700000330 implements MigrationInterface {
  name = 'AddStartQueue1763700000330';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE start_queue (
        invocation_id uuid PRIMARY KEY,
        project_id uuid NOT NULL,
        tag bigint NOT NULL,
        seq bigserial NOT NULL,
        picked_until timestamptz NULL,
        queued_at timestamptz NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(`CREATE INDEX start_queue_order_idx ON start_queue (tag, seq)`);
    await queryRunner.query(`CREATE INDEX start_queue_project_idx ON start_queue (project_id, tag)`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE start_queue`);
  }
}
