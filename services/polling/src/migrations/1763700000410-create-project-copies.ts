import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * What the polling service needs of each project, kept from the gateway's events: whether it
 * may be polled (master switch on, not deleted) and its configuration version, which every
 * polled item's run request carries.
 */
export class CreateProjectCopies1763700000410 implements MigrationInterface {
  name = 'CreateProjectCopies1763700000410';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE project_copies (
        project_id uuid PRIMARY KEY,
        org_id uuid NOT NULL,
        external_api_enabled boolean NOT NULL DEFAULT true,
        deleted boolean NOT NULL DEFAULT false,
        -- The highest configuration version applied; the settings columns' own version.
        config_version integer NOT NULL DEFAULT 0,
        settings_version integer NOT NULL DEFAULT 0
      )`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE project_copies`);
  }
}
