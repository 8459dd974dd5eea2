import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The gateway's configuration versions on the copies: `config_version` is the highest project
 * version applied, `settings_version` the version of the settings columns (so an older settings
 * event never overwrites newer settings, whatever order events arrive in), `deleted` marks a
 * deleted project, and `plan_version` orders an organization's plans.
 */
export class AddConfigVersions1763700000140 implements MigrationInterface {
  name = 'AddConfigVersions1763700000140';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      ALTER TABLE project_copies
        ADD COLUMN config_version integer NOT NULL DEFAULT 0,
        ADD COLUMN settings_version integer NOT NULL DEFAULT 0,
        ADD COLUMN deleted boolean NOT NULL DEFAULT false`);
    await queryRunner.query(`ALTER TABLE organization_copies ADD COLUMN plan_version integer NOT NULL DEFAULT 0`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE organization_copies DROP COLUMN plan_version`);
    await queryRunner.query(`ALTER TABLE project_copies DROP COLUMN config_version, DROP COLUMN settings_version, DROP COLUMN deleted`);
  }
}
