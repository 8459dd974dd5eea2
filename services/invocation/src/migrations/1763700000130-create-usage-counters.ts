import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Runs counted per organization and quota period, for organizations whose plan has a monthly
 * quota. A row is (re)built from `invocation_views` when it is first needed in a period or the
 * plan changed since (`plan_changed_at`): runs recorded while the plan was unlimited were not
 * counted. After that it moves only with the runs recorded in the same transaction, under its
 * row lock, which is what makes the quota exact under concurrency.
 */
export class CreateUsageCounters1763700000130 implements MigrationInterface {
  name = 'CreateUsageCounters1763700000130';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE usage_counters (
        org_id uuid NOT NULL,
        period_start timestamptz NOT NULL,
        -- NULL until counted from the read model (a row is inserted first so it can be locked).
        used bigint NULL,
        plan_changed_at timestamptz NULL,
        PRIMARY KEY (org_id, period_start)
      )`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE usage_counters`);
  }
}
