import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Every change that acts on a project commits a larger `projects.config_version`: its API
 * settings, a publish, a token revoked, its organization's plan, its deletion. Replicas compare
 * the version of what they hold in memory with this column before they act, and commands that
 * act for a project carry it to the services that keep copies. `organizations.plan_version`
 * orders plan changes for those copies.
 */
export class AddConfigVersions1763700000020 implements MigrationInterface {
  name = 'AddConfigVersions1763700000020';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE projects ADD COLUMN config_version integer NOT NULL DEFAULT 1`);
    await queryRunner.query(`ALTER TABLE organizations ADD COLUMN plan_version integer NOT NULL DEFAULT 0`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE organizations DROP COLUMN plan_version`);
    await queryRunner.query(`ALTER TABLE projects DROP COLUMN config_version`);
  }
}
